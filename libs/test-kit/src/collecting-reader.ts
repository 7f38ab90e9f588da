import type { Attributes } from '@opentelemetry/api';
import type { DataPoint, Histogram, MetricReader } from '@opentelemetry/sdk-metrics';

/** A reader a test collects from when it wants (startMetrics({ readers: [reader] })), and its data points by metric name. */
export function collectingReader() {
  const { MetricReader: Reader } = require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
  class Collecting extends Reader {
    protected async onForceFlush(): Promise<void> {}
    protected async onShutdown(): Promise<void> {}
  }
  const reader: MetricReader = new Collecting();
  return {
    reader,
    /** Every data point of `name` now: a histogram's count, a gauge's value, with its attributes. */
    async points(name: string): Promise<Array<{ attributes: Attributes; value: number }>> {
      const { resourceMetrics } = await reader.collect();
      const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
      return (metric?.dataPoints ?? []).map((p: DataPoint<unknown>) => ({
        attributes: p.attributes,
        value: typeof p.value === 'number' ? p.value : (p.value as Histogram).count,
      }));
    },
  };
}
