import type { Context } from '@opentelemetry/api';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

let sdk: NodeSDK | null = null;

/** Attributes that carry a query string, which can hold personal data; the spec removes them from spans. */
const QUERY_ATTRIBUTES = ['url.query', 'http.query'];
const URL_ATTRIBUTES = ['url.full', 'http.url', 'http.target'];

/**
 * Removes query strings from every span before any processor sees it ended (export or in-process capture).
 * Runs first in the chain; the attributes object of an ended span is still the one exporters read.
 */
export class QueryRedactingProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor[]) {}
  onStart(span: Span, context: Context): void {
    for (const p of this.next) p.onStart(span, context);
  }
  onEnd(span: ReadableSpan): void {
    const attributes = span.attributes as Record<string, unknown>;
    for (const key of QUERY_ATTRIBUTES) delete attributes[key];
    for (const key of URL_ATTRIBUTES) {
      const value = attributes[key];
      if (typeof value === 'string' && value.includes('?')) attributes[key] = value.slice(0, value.indexOf('?'));
    }
    for (const p of this.next) p.onEnd(span);
  }
  async forceFlush(): Promise<void> {
    await Promise.all(this.next.map((p) => p.forceFlush()));
  }
  async shutdown(): Promise<void> {
    await Promise.all(this.next.map((p) => p.shutdown()));
  }
}

export interface TracingOptions {
  serviceName: string;
  /** OTLP/http collector address; without it, spans are only kept for in-process processors. */
  otlpEndpoint?: string;
  extraProcessors?: SpanProcessor[];
}

/**
 * Starts OpenTelemetry once per process, before express, http, mongodb or kafkajs are loaded, so the
 * instrumentations can wrap them. Returns false when there is nothing to export to and nothing to capture.
 */
export function startTracing(options: TracingOptions): boolean {
  if (sdk) return true;
  if (!options.otlpEndpoint && !options.extraProcessors?.length) return false;
  // Loaded only when tracing is on: the SDK and its instrumentations cost about a second of start-up.
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation } = require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { MongoDBInstrumentation } = require('@opentelemetry/instrumentation-mongodb') as typeof import('@opentelemetry/instrumentation-mongodb');
  const { KafkaJsInstrumentation } = require('@opentelemetry/instrumentation-kafkajs') as typeof import('@opentelemetry/instrumentation-kafkajs');
  const { GrpcInstrumentation } = require('@opentelemetry/instrumentation-grpc') as typeof import('@opentelemetry/instrumentation-grpc');
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { ATTR_SERVICE_NAME } = require('@opentelemetry/semantic-conventions') as typeof import('@opentelemetry/semantic-conventions');
  const processors: SpanProcessor[] = [...(options.extraProcessors ?? [])];
  if (options.otlpEndpoint) {
    const url = `${options.otlpEndpoint.replace(/\/$/, '')}/v1/traces`;
    processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url })));
  }
  if (processors.length === 0) return false;
  sdk = new NodeSDK({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }),
    spanProcessors: [new QueryRedactingProcessor(processors)],
    instrumentations: [
      new HttpInstrumentation({
        // Query strings can hold personal data: keep only the path in span names and attributes.
        requestHook: (span, request) => {
          const path = 'path' in request && typeof request.path === 'string' ? request.path.split('?')[0] : undefined;
          if (path) span.setAttribute('url.path', path);
        },
      }),
      new ExpressInstrumentation(),
      new MongoDBInstrumentation({ enhancedDatabaseReporting: false }),
      new KafkaJsInstrumentation(),
      new GrpcInstrumentation(),
    ],
  });
  sdk.start();
  return true;
}

export async function stopTracing(): Promise<void> {
  await sdk?.shutdown();
  sdk = null;
}
