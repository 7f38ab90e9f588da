import { startMetrics, stopMetrics } from './metrics';
import { startTracing, stopTracing } from './tracing';

/** Traces and metrics for a process, both to the same collector (the first call in a process wins). */
export function startTelemetry(options: { serviceName: string; otlpEndpoint?: string }): void {
  startTracing(options);
  startMetrics(options);
}

/**
 * Sends what is still queued (spans, the metrics since the last export) and stops both, within `deadlineMs`: a
 * collector that does not answer must not hold a stopping process past its grace period.
 */
export async function stopTelemetry(deadlineMs = 5000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled([stopMetrics(), stopTracing()]),
    new Promise((resolve) => (timer = setTimeout(resolve, deadlineMs).unref())),
  ]);
  clearTimeout(timer);
}
