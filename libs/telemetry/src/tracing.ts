import type { Context } from '@opentelemetry/api';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { debugSpanCapture } from './debug-spans';
import { redactAttributes } from './redaction';
import { DebugRequestPropagator, EndpointRateSampler, TailSamplingProcessor } from './sampling';

let sdk: NodeSDK | null = null;

/**
 * Removes query strings, database statements and filter expressions (see redaction.ts) from every span before any processor sees it ended (export or in-process capture).
 * Runs first in the chain; the attributes object of an ended span is still the one exporters read.
 */
export class QueryRedactingProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor[]) {}
  onStart(span: Span, context: Context): void {
    for (const p of this.next) p.onStart(span, context);
  }
  onEnd(span: ReadableSpan): void {
    redactAttributes(span.attributes as Record<string, unknown>);
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
  /** Stored traces per endpoint per second the sampler aims at (busy endpoints keep a fraction). */
  tracesPerEndpointPerS?: number;
  /** A call at least this long is always kept. */
  slowMs?: number;
}

/** Endpoints whose traces are not recorded at all (an opted-out codops); set by the gateway. */
let optedOut: (endpointKey: string) => boolean = () => false;
export function setTracingOptOut(test: (endpointKey: string) => boolean): void {
  optedOut = test;
}

/**
 * Starts OpenTelemetry once per process, before express, http, mongodb or kafkajs are loaded, so the
 * instrumentations can wrap them. Always on: recorded spans are kept briefly in process for the debug block
 * (debugSpanCapture). With an OTLP endpoint every trace is recorded and exported sampled per endpoint; without one,
 * only the traces of calls that ask for their debug block are recorded (nothing else would read them).
 * OTEL_SDK_DISABLED=true turns tracing off (no debug spans either). Returns false when tracing is off.
 */
export function startTracing(options: TracingOptions): boolean {
  if (sdk) return true;
  if (process.env.OTEL_SDK_DISABLED === 'true') return false;
  // Loaded only when tracing is on: the SDK and its instrumentations cost about a second of start-up.
  const { NodeSDK, core } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { MongoDBInstrumentation } =
    require('@opentelemetry/instrumentation-mongodb') as typeof import('@opentelemetry/instrumentation-mongodb');
  const { KafkaJsInstrumentation } =
    require('@opentelemetry/instrumentation-kafkajs') as typeof import('@opentelemetry/instrumentation-kafkajs');
  const { GrpcInstrumentation } = require('@opentelemetry/instrumentation-grpc') as typeof import('@opentelemetry/instrumentation-grpc');
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { ATTR_SERVICE_NAME } = require('@opentelemetry/semantic-conventions') as typeof import('@opentelemetry/semantic-conventions');
  // The debug capture sees every span (before sampling); the exporter only the traces the tail sampler keeps.
  const processors: SpanProcessor[] = [debugSpanCapture, ...(options.extraProcessors ?? [])];
  const slowMs = options.slowMs ?? positive(process.env.TRACE_SLOW_MS) ?? 1000;
  if (options.otlpEndpoint) {
    const url = `${options.otlpEndpoint.replace(/\/$/, '')}/v1/traces`;
    processors.push(new TailSamplingProcessor(new BatchSpanProcessor(new OTLPTraceExporter({ url })), { slowMs }));
  }
  const tracesPerEndpointPerS = options.tracesPerEndpointPerS ?? positive(process.env.TRACES_PER_ENDPOINT_PER_S) ?? 10;
  sdk = new NodeSDK({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }),
    // Without a collector nothing would receive metrics: no meter provider, so the HTTP instrumentation records
    // none per request (the SDK's default exporter would send them to localhost:4318 every minute, to no one).
    ...(options.otlpEndpoint ? {} : { metricReaders: [] }),
    sampler: new EndpointRateSampler({
      tracesPerEndpointPerS,
      optedOut: (key) => optedOut(key),
      recordEveryTrace: processors.length > 1,
    }),
    // The SDK's default propagators (W3C trace context and baggage), plus the mark of a call that asks for its debug block.
    textMapPropagator: new core.CompositePropagator({
      propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator(), new DebugRequestPropagator()],
    }),
    spanProcessors: [new QueryRedactingProcessor(processors)],
    instrumentations: [
      new HttpInstrumentation({
        // Query strings can hold personal data: keep only the path in span names and attributes.
        requestHook: (span, request) => {
          const path = 'path' in request && typeof request.path === 'string' ? request.path.split('?')[0] : undefined;
          if (path) span.setAttribute('url.path', path);
        },
      }),
      // No Express instrumentation: it wraps every layer of every request (~75 µs a read) for route-handler spans the
      // debug block does not need; http-kit's nameServerSpanByRoute names the server span after the route instead.
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

function positive(value: string | undefined): number | undefined {
  const n = value === undefined ? NaN : Number(value);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}
