import { ROOT_CONTEXT, SpanKind, TraceFlags, context, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { DebugSpanCapture } from './debug-spans';

const capture = new DebugSpanCapture();
const tracer = new BasicTracerProvider({ spanProcessors: [capture] }).getTracer('test');
/** The trace id a client chose (`traceparent: 00-<T>-...-01`), shared by two calls. */
const chosen = trace.setSpanContext(ROOT_CONTEXT, {
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  traceFlags: TraceFlags.SAMPLED,
  isRemote: true,
});

/** One call: a server span under the remote parent, a client span under it, one left open. */
function call(path: string, endInner = true) {
  const server = tracer.startSpan(`GET ${path}`, { kind: SpanKind.SERVER, attributes: { 'url.path': path } }, chosen);
  const inner = tracer.startSpan('find', { kind: SpanKind.CLIENT }, trace.setSpan(context.active(), server));
  if (endInner) inner.end();
  return { server, inner };
}

describe('the debug capture collects the spans of one call', () => {
  it('given two calls in the same trace, when one collects by its span, then it sees its own spans only', () => {
    const bob = call('/api/preference/bobs-key');
    bob.server.end();
    const alice = call('/api/v1/zzebu/trending', false);
    expect(alice.server.spanContext().traceId).toBe(bob.server.spanContext().traceId);

    const spans = capture.collect(alice.server.spanContext().spanId);
    expect(spans.map((s) => s.name).sort()).toEqual(['GET /api/v1/zzebu/trending', 'find']);
    expect(JSON.stringify(spans)).not.toContain('bobs-key');
    // From any span of the call, the same call.
    expect(capture.collect(alice.inner.spanContext().spanId)).toHaveLength(2);
    alice.inner.end();
    alice.server.end();
    expect(capture.collect(bob.server.spanContext().spanId).map((s) => s.attributes['url.path'])).toContain('/api/preference/bobs-key');
  });

  it('keeps a child started under an ended parent in its call, and forgets the oldest calls beyond its bound', () => {
    const small = new DebugSpanCapture(2);
    const t = new BasicTracerProvider({ spanProcessors: [small] }).getTracer('test');
    const roots = [1, 2, 3].map((n) => {
      const root = t.startSpan(`call-${n}`);
      root.end();
      t.startSpan('child', {}, trace.setSpan(ROOT_CONTEXT, root)).end();
      return root.spanContext().spanId;
    });
    expect(small.collect(roots[0])).toEqual([]);
    expect(
      small
        .collect(roots[2])
        .map((s) => s.name)
        .sort(),
    ).toEqual(['call-3', 'child']);
  });
});
