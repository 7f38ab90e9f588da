import type { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

let sdk: NodeSDK | null = null;

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
    spanProcessors: processors,
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
