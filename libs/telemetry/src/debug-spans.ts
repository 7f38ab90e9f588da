import { gunzipSync, gzipSync } from 'node:zlib';
import { type Context, type HrTime, SpanKind } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { redactAttributes } from './redaction';

/** One span as the debug block shows it (spec: request-trace-debug-block.md, "Span"). */
export interface DebugSpan {
  name: string;
  trace_id: string;
  span_id: string;
  parent_id: string | null;
  kind: string;
  start_ms: number;
  duration_ms: number;
  attributes: Record<string, unknown>;
}

/** Request header a caller of a service sets to get the service's spans back; response header that carries them. */
export const DEBUG_SPANS_HEADER = 'x-udp-debug-spans';

const hrToMs = (t: HrTime) => t[0] * 1000 + t[1] / 1e6;
const round = (ms: number) => Math.round(ms * 1000) / 1000;

function toDebugSpan(span: ReadableSpan, endMs?: number): DebugSpan {
  const context = span.spanContext();
  const start = hrToMs(span.startTime);
  const end = endMs ?? hrToMs(span.endTime);
  return {
    name: span.name,
    trace_id: context.traceId,
    span_id: context.spanId,
    parent_id: span.parentSpanContext?.spanId ?? null,
    kind: `SpanKind.${SpanKind[span.kind]}`,
    start_ms: round(start),
    duration_ms: round(Math.max(0, end - start)),
    attributes: redactAttributes({ ...span.attributes }),
  };
}

/**
 * Keeps, in this process, the spans of recent recorded traces (before the tail's export decision), so a debug call
 * can return all spans of its own trace. Spans still open (the gateway span while it writes the answer, a service's
 * server span while it writes its headers) are shown as they are at that moment, ending then. Ended spans are kept
 * as the SDK made them and shaped for the debug block only when one is asked for: nearly no trace ever is.
 */
export class DebugSpanCapture implements SpanProcessor {
  private readonly ended = new Map<string, ReadableSpan[]>();
  private readonly open = new Map<string, Span>();

  constructor(private readonly maxTraces = 2000) {}

  onStart(span: Span, _context: Context): void {
    this.open.set(span.spanContext().spanId, span);
  }

  onEnd(span: ReadableSpan): void {
    const { traceId, spanId } = span.spanContext();
    this.open.delete(spanId);
    let spans = this.ended.get(traceId);
    if (!spans) {
      if (this.ended.size >= this.maxTraces) this.ended.delete(this.ended.keys().next().value as string);
      this.ended.set(traceId, (spans = []));
    }
    spans.push(span);
  }

  /** Every span of the trace seen here: the ended ones, then the open ones as of now; ordered by end time. */
  // The SDK times spans on performance.timeOrigin + performance.now(), which drifts from Date.now(): same clock here.
  collect(traceId: string, now = performance.timeOrigin + performance.now()): DebugSpan[] {
    const spans = (this.ended.get(traceId) ?? []).map((span) => toDebugSpan(span));
    for (const span of this.open.values()) {
      if (span.spanContext().traceId === traceId) spans.push(toDebugSpan(span as unknown as ReadableSpan, now));
    }
    return orderByEnd(spans);
  }

  forget(traceId: string): void {
    this.ended.delete(traceId);
  }

  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {
    this.ended.clear();
    this.open.clear();
  }
}

/** Ordered by end time; spans ending together keep children before parents (the root last). */
export function orderByEnd(spans: DebugSpan[]): DebugSpan[] {
  const unique = new Map(spans.map((s) => [s.span_id, s]));
  const depth = (s: DebugSpan) => {
    let d = 0;
    for (let p = s.parent_id; p && unique.has(p) && d < 100; p = unique.get(p)!.parent_id) d++;
    return d;
  };
  return [...unique.values()].sort((a, b) => a.start_ms + a.duration_ms - (b.start_ms + b.duration_ms) || depth(b) - depth(a));
}

/** The process's capture, installed by startTracing. */
export const debugSpanCapture = new DebugSpanCapture();

export function encodeDebugSpans(spans: DebugSpan[]): string {
  return gzipSync(Buffer.from(JSON.stringify(spans))).toString('base64');
}

export function decodeDebugSpans(value: string | undefined): DebugSpan[] {
  if (!value) return [];
  try {
    const parsed = JSON.parse(gunzipSync(Buffer.from(value, 'base64')).toString('utf8')) as unknown;
    return Array.isArray(parsed) ? (parsed as DebugSpan[]) : [];
  } catch {
    return [];
  }
}
