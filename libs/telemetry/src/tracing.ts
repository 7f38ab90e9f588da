import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

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
