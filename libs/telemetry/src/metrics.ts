import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { Attributes, Counter, Histogram, Meter, ObservableResult } from '@opentelemetry/api';
import type { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { METRICS, type MetricEntry } from './metrics-catalogue';
import { processResource } from './resource';

/**
 * The apps' metrics: recorded for every call and every collection, independent of trace sampling (the spec samples
 * trace storage, not what the rates and latencies describe). Exported over OTLP/http to the collector, which shows
 * them to Prometheus; docs/observability.md says what each means and which alert to set on it.
 *
 * Our own provider, never the global one: the HTTP and undici instrumentations would otherwise record their own
 * request durations beside ours and the same calls would be counted twice. Without an endpoint (the default
 * embedded mode) nothing is recorded: every instrument is a no-op.
 */
let provider: MeterProvider | null = null;
let meter: Meter | null = null;
const histograms = new Map<string, Histogram>();
const counters = new Map<string, Counter>();

/** Buckets of the HTTP semantic conventions (seconds), advised to the SDK. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** Gauges are read by callbacks registered here; the instrument of an entry calls all of its callbacks. */
type GaugeCallback = (observe: (value: number, attributes?: Attributes) => void) => void | Promise<void>;
const gaugeCallbacks = new Map<string, Set<GaugeCallback>>();

export interface MetricsOptions {
  serviceName: string;
  /** OTLP/http collector address; without it and without `readers`, metrics stay off. */
  otlpEndpoint?: string;
  /** How often metrics are exported (OTEL_METRIC_EXPORT_INTERVAL, default 15 s). */
  exportIntervalMs?: number;
  /** Readers of the caller's own (tests: an in-memory exporter). */
  readers?: MetricReader[];
}

/**
 * Starts the meter provider once per process (the first call wins: in embedded mode every app shares it, and the
 * `udp.service` attribute says which app a data point is from). Returns false when metrics stay off.
 */
export function startMetrics(options: MetricsOptions): boolean {
  if (provider) return true;
  if (process.env.OTEL_SDK_DISABLED === 'true') return false;
  const readers = [...(options.readers ?? [])];
  if (options.otlpEndpoint) {
    const { PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
    const { OTLPMetricExporter } =
      require('@opentelemetry/exporter-metrics-otlp-http') as typeof import('@opentelemetry/exporter-metrics-otlp-http');
    const interval = options.exportIntervalMs ?? positive(process.env.OTEL_METRIC_EXPORT_INTERVAL) ?? 15_000;
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${options.otlpEndpoint.replace(/\/$/, '')}/v1/metrics` }),
        exportIntervalMillis: interval,
        exportTimeoutMillis: Math.min(interval, 30_000),
      }),
    );
  }
  if (readers.length === 0) return false;
  const sdk = require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
  provider = new sdk.MeterProvider({ resource: processResource(options.serviceName), readers });
  meter = provider.getMeter('udp');
  for (const [name, callbacks] of gaugeCallbacks) createGauge(name, callbacks);
  observeRuntime();
  return true;
}

/** Flushes what was recorded since the last export and stops the provider (a stopping process loses nothing). */
export async function stopMetrics(): Promise<void> {
  const stopping = provider;
  provider = null;
  meter = null;
  histograms.clear();
  counters.clear();
  stopRuntime?.();
  await stopping?.shutdown();
}

/** Whether a meter records: callers skip building attributes when none does. */
export const metricsOn = (): boolean => meter !== null;

/** Records one value of a histogram of the catalogue (no-op while metrics are off). */
export function recordHistogram(entry: MetricEntry & { kind: 'histogram' }, value: number, attributes: Attributes): void {
  if (!meter) return;
  let histogram = histograms.get(entry.name);
  if (!histogram) {
    histogram = meter.createHistogram(entry.name, {
      unit: entry.unit,
      description: entry.description,
      ...(entry.unit === 's' ? { advice: { explicitBucketBoundaries: DURATION_BUCKETS } } : {}),
    });
    histograms.set(entry.name, histogram);
  }
  histogram.record(value, attributes);
}

/** Adds to a counter of the catalogue (no-op while metrics are off). */
export function recordCounter(entry: MetricEntry & { kind: 'counter' }, value: number, attributes: Attributes): void {
  if (!meter) return;
  let counter = counters.get(entry.name);
  if (!counter) {
    counter = meter.createCounter(entry.name, { unit: entry.unit, description: entry.description });
    counters.set(entry.name, counter);
  }
  counter.add(value, attributes);
}

/**
 * Reads a gauge of the catalogue at each collection through `callback` (it may be async: a store query). Works
 * whether metrics start before or after; returns the unregistration (a stopping part must call it).
 */
export function observeGauge(entry: MetricEntry & { kind: 'gauge' }, callback: GaugeCallback): () => void {
  let callbacks = gaugeCallbacks.get(entry.name);
  if (!callbacks) {
    callbacks = new Set();
    gaugeCallbacks.set(entry.name, callbacks);
    if (meter) createGauge(entry.name, callbacks);
  }
  callbacks.add(callback);
  return () => void callbacks.delete(callback);
}

function createGauge(name: string, callbacks: Set<GaugeCallback>): void {
  const entry = Object.values(METRICS).find((m) => m.name === name)!;
  meter!
    .createObservableGauge(entry.name, { unit: entry.unit, description: entry.description })
    .addCallback(async (result: ObservableResult) => {
      // One failing reader (a store down) loses its own value for this collection, not the others'.
      await Promise.all(
        [...callbacks].map(async (read) => {
          try {
            await read((value, attributes) => result.observe(value, attributes));
          } catch {
            // The store's own health check reports it; a gauge without a value is what an outage looks like.
          }
        }),
      );
    });
}

let stopRuntime: (() => void) | undefined;

/** The process' own signals: event-loop delay since the last collection, and the V8 heap. */
function observeRuntime(): void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  // p99 and max describe the same window: read together once per collection, then a new window starts.
  let window = { p99: 0, max: 0, at: 0 };
  const read = () => {
    if (Date.now() - window.at > 1000) {
      window = { p99: delay.percentile(99) / 1e9, max: delay.max / 1e9, at: Date.now() };
      delay.reset();
    }
    return window;
  };
  const unregister = [
    observeGauge(METRICS.eventLoopDelayP99, (observe) => observe(read().p99)),
    observeGauge(METRICS.eventLoopDelayMax, (observe) => observe(read().max)),
    observeGauge(METRICS.heapUsed, (observe) => observe(getHeapStatistics().used_heap_size)),
    observeGauge(METRICS.heapLimit, (observe) => observe(getHeapStatistics().heap_size_limit)),
  ];
  stopRuntime = () => {
    delay.disable();
    for (const u of unregister) u();
    stopRuntime = undefined;
  };
}

function positive(value: string | undefined): number | undefined {
  const n = value === undefined ? NaN : Number(value);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Attributes a handler adds to its request's data point (the personalisation endpoint's codops, endpoint, component). */
const requestAttributes = new WeakMap<object, Attributes>();

export function addRequestMetricAttributes(response: object, attributes: Attributes): void {
  requestAttributes.set(response, { ...requestAttributes.get(response), ...attributes });
}

export function requestMetricAttributes(response: object): Attributes | undefined {
  return requestAttributes.get(response);
}
