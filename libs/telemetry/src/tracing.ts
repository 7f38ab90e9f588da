import type { Context } from '@opentelemetry/api';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { debugSpanCapture } from './debug-spans';
import { EdgeIdGenerator, setEdgeTracing } from './edge';
import { redactAttributes } from './redaction';
import { processResource } from './resource';
import { DebugRequestPropagator, EndpointRateSampler, TailSamplingProcessor } from './sampling';

let provider: NodeTracerProvider | null = null;

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
  /** Which traces the head records (EndpointSamplerOptions.record); default from the exporter and processors. */
  record?: 'all' | 'sampled' | 'debug';
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
  if (provider) return true;
  if (process.env.OTEL_SDK_DISABLED === 'true') return false;
  // Loaded only when tracing is on. The tracer provider, not the all-in-one NodeSDK: that one loads every exporter,
  // propagator and the metrics and logs SDKs at each start for signals this system does not send (docs/performance.md,
  // "Tracing").
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation');
  const core = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  // The debug capture sees every recorded span (before sampling); the exporter only the traces the tail sampler keeps.
  const processors: SpanProcessor[] = [debugSpanCapture, ...(options.extraProcessors ?? [])];
  const slowMs = options.slowMs ?? positive(process.env.TRACE_SLOW_MS) ?? 1000;
  if (options.otlpEndpoint) {
    const { OTLPTraceExporter } =
      require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
    const url = `${options.otlpEndpoint.replace(/\/$/, '')}/v1/traces`;
    processors.push(new TailSamplingProcessor(new BatchSpanProcessor(new OTLPTraceExporter({ url })), { slowMs }));
  }
  const tracesPerEndpointPerS = options.tracesPerEndpointPerS ?? positive(process.env.TRACES_PER_ENDPOINT_PER_S) ?? 10;
  const { RandomIdGenerator } = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const ids = new EdgeIdGenerator(new RandomIdGenerator());
  const sampler = new EndpointRateSampler({
    tracesPerEndpointPerS,
    optedOut: (key) => optedOut(key),
    // An in-process processor (a test's) reads every span; an exporter only the traces the head keeps, unless
    // TRACE_RECORD_ALL asks for every trace recorded so that the tail keeps failed and slow calls whole.
    record:
      options.record ??
      ((options.extraProcessors?.length ?? 0) > 0 || (options.otlpEndpoint && process.env.TRACE_RECORD_ALL === 'true')
        ? 'all'
        : options.otlpEndpoint
          ? 'sampled'
          : 'debug'),
  });
  provider = new NodeTracerProvider({
    resource: processResource(options.serviceName),
    sampler,
    idGenerator: ids,
    spanProcessors: [new QueryRedactingProcessor(processors)],
  });
  // W3C trace context and baggage (the SDK's defaults), plus the mark of a call that asks for its debug block.
  provider.register({
    // Nothing of it is continued from untrusted callers at the public edge (edge.ts).
    propagator: new core.CompositePropagator({
      propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator(), new DebugRequestPropagator()],
    }),
  });
  registerInstrumentations({ tracerProvider: provider, instrumentations: instrumentations() });
  setEdgeTracing({ sampler, ids, tracer: provider.getTracer('udp-http-edge') });
  return true;
}

/**
 * Outgoing HTTP always (the gateway's forwarding, the personalisation calls to services, the export callbacks), and
 * Node's `fetch` (undici) always: the export-worker's reads of the
 * services and the identity provider's userinfo calls (libs/auth) continue the current trace and carry its W3C
 * context, so an export is one trace from request to callback. Like the HTTP client spans, a `fetch` outside any
 * trace (background work) makes no root span. A client library's instrumentation only where its adapter is
 * configured, so the embedded mode (SQLite, memory read models, in-process bus) loads none of them. No Express
 * instrumentation: it wraps every layer of every request (docs/performance.md, "Tracing") for route-handler spans
 * the debug block does not need; http-kit's observeServerRequests names the server span after the route instead.
 * No incoming HTTP instrumentation either: each server's edge starts its span itself, only in a recorded trace
 * (edge.ts, `traceRequest`).
 */
function instrumentations() {
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const list: import('@opentelemetry/instrumentation').Instrumentation[] = [
    new HttpInstrumentation({
      disableIncomingRequestInstrumentation: true,
      // A call outside a recorded trace makes no span (the edge sends a request's unrecorded trace on: proxy.ts).
      requireParentforOutgoingSpans: true,
      // Query strings can hold personal data: keep only the path in span names and attributes.
      requestHook: (span, request) => {
        const path = 'path' in request && typeof request.path === 'string' ? request.path.split('?')[0] : undefined;
        if (path) span.setAttribute('url.path', path);
      },
    }),
  ];
  const { UndiciInstrumentation } =
    require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  // Query strings leave the span with redaction.ts (url.full, url.query), as for the HTTP instrumentation.
  list.push(new UndiciInstrumentation({ requireParentforSpans: true }));
  if (process.env.MONGO_URL) {
    const { MongoDBInstrumentation } =
      require('@opentelemetry/instrumentation-mongodb') as typeof import('@opentelemetry/instrumentation-mongodb');
    list.push(new MongoDBInstrumentation({ enhancedDatabaseReporting: false }));
  }
  if (process.env.KAFKA_BROKERS) {
    const { KafkaJsInstrumentation } =
      require('@opentelemetry/instrumentation-kafkajs') as typeof import('@opentelemetry/instrumentation-kafkajs');
    list.push(new KafkaJsInstrumentation());
  }
  if (process.env.EVENTSTORE_URL) {
    const { GrpcInstrumentation } = require('@opentelemetry/instrumentation-grpc') as typeof import('@opentelemetry/instrumentation-grpc');
    list.push(new GrpcInstrumentation());
  }
  return list;
}

export async function stopTracing(): Promise<void> {
  setEdgeTracing(null);
  await provider?.shutdown();
  provider = null;
}

function positive(value: string | undefined): number | undefined {
  const n = value === undefined ? NaN : Number(value);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}
