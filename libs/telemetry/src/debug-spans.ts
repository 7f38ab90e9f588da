import { gunzipSync, gzipSync } from 'node:zlib';
import { type Context, type HrTime, SpanKind, trace } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LRUCache } from 'lru-cache';
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
 * Keeps, in this process, the spans of recent recorded calls (before the tail's export decision), so a debug call
 * can return the spans of its own call. Spans are grouped by their local root: the span this process started
 * without a local parent (the gateway's server span; a service's server span under the gateway's remote client
 * span). A call collects by its own root span id, never by trace id: a trace id can be chosen by a client (a
 * `traceparent`), a root span id is made here, so no other call's spans can join a debug block, even in the same
 * trace. Spans still open (the gateway span while it writes the answer) are shown as they are at that moment,
 * ending then. Ended spans are kept as the SDK made them and shaped only when a block is asked for.
 */
export class DebugSpanCapture implements SpanProcessor {
  /** Ended spans by local root span id (insertion order: oldest first, evicted beyond maxCalls). */
  private readonly ended = new Map<string, ReadableSpan[]>();
  /** Open spans by span id, with their local root. */
  private readonly open = new Map<string, { span: Span; root: string }>();
  /** Local root of each span seen, so a child started under an ended parent still joins its call. */
  private readonly rootOf: LRUCache<string, string>;

  constructor(private readonly maxCalls = 2000) {
    this.rootOf = new LRUCache({ max: maxCalls * 64 });
  }

  onStart(span: Span, parentContext: Context): void {
    const spanId = span.spanContext().spanId;
    const parent = trace.getSpanContext(parentContext);
    // A remote parent (another process, or a caller) starts a new local call.
    const root = (parent && !parent.isRemote && this.rootOf.get(parent.spanId)) || spanId;
    this.rootOf.set(spanId, root);
    this.open.set(spanId, { span, root });
  }

  onEnd(span: ReadableSpan): void {
    const { spanId } = span.spanContext();
    const root = this.open.get(spanId)?.root ?? this.rootOf.get(spanId) ?? spanId;
    this.open.delete(spanId);
    let spans = this.ended.get(root);
    if (!spans) {
      if (this.ended.size >= this.maxCalls) this.evict(this.ended.keys().next().value as string);
      this.ended.set(root, (spans = []));
    }
    spans.push(span);
  }

  /** The local root of a span seen here (itself when it is one, or unknown). */
  localRootOf(spanId: string): string {
    return this.rootOf.get(spanId) ?? spanId;
  }

  /**
   * Every span of the call whose local root is (or whose span tree holds) `spanId`: the ended ones, then the open
   * ones as of now; ordered by end time.
   */
  // The SDK times spans on performance.timeOrigin + performance.now(), which drifts from Date.now(): same clock here.
  collect(spanId: string, now = performance.timeOrigin + performance.now()): DebugSpan[] {
    const root = this.localRootOf(spanId);
    const spans = (this.ended.get(root) ?? []).map((span) => toDebugSpan(span));
    // An open span ends now, and never before a span of its call that has ended: the SDK anchors a span's times on
    // Date.now() at its root's start, which drifts from this clock in a process that has run for long (a span that ended
    // just before was seen ending "after now" in a long test run).
    let end = now;
    for (const span of spans) end = Math.max(end, span.start_ms + span.duration_ms);
    for (const entry of this.open.values()) {
      if (entry.root === root) spans.push(toDebugSpan(entry.span as unknown as ReadableSpan, end));
    }
    return orderByEnd(spans);
  }

  private evict(root: string): void {
    for (const span of this.ended.get(root) ?? []) this.rootOf.delete(span.spanContext().spanId);
    this.ended.delete(root);
  }

  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {
    this.ended.clear();
    this.open.clear();
    this.rootOf.clear();
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
