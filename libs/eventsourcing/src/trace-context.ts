import { ROOT_CONTEXT, context, propagation, trace } from '@opentelemetry/api';
import type { RecordedEvent } from '@udp/eventstore';

/**
 * The W3C trace context of the request that appends an event travels in the event's metadata, so the work the
 * event causes later (read-model updates, integration messages on the bus and what their consumers do) joins the
 * request's trace. Empty outside a trace.
 */
export function traceMetadata(): Record<string, string> | undefined {
  if (!trace.getActiveSpan()?.isRecording()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/** Events older than this replay into a fresh context: a start-up rebuild must not add spans to old traces. */
const JOIN_WITHIN_MS = 60_000;

export function withEventTraceContext<T>(event: RecordedEvent, work: () => Promise<T>, now = Date.now()): Promise<T> {
  const traceparent = event.metadata?.traceparent;
  if (typeof traceparent !== 'string' || now - event.createdAt > JOIN_WITHIN_MS) return work();
  const carrier: Record<string, string> = { traceparent };
  if (typeof event.metadata.tracestate === 'string') carrier.tracestate = event.metadata.tracestate;
  return context.with(propagation.extract(ROOT_CONTEXT, carrier), work);
}
