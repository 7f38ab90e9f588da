import { SpanKind, context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { InProcessBus, type ReceivedMessage } from '@udp/bus';
import { MemoryEventStore } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { Projector, traceMetadata, withEventTraceContext } from '@udp/eventsourcing';
import { TracedBus, tracedEventStore, tracedReadModels } from './traced-adapters';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager().enable();

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(contextManager);
  // What startTracing registers in the apps (with baggage and the debug-request mark besides).
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});
beforeEach(() => exporter.reset());

const inRequest = <T>(work: () => Promise<T>) =>
  trace.getTracer('test').startActiveSpan('request', async (span) => {
    try {
      return await work();
    } finally {
      span.end();
    }
  });

describe('embedded adapters traced like their libraries', () => {
  it('give store calls inside a trace CLIENT spans named after the operation, and none outside', async () => {
    const store = tracedEventStore(new MemoryEventStore(), 'history-svc');
    const readModels = tracedReadModels(new MemoryReadModelStore(), 'history-svc', 'memory');
    await store.appendToStream('s-1', [{ id: 'e1', type: 'T', data: {} }], { expectedRevision: 'any' });
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    await inRequest(async () => {
      await store.readStream('s-1');
      await readModels.collection('history_entries').find({ userId: 'tess' });
    });
    const spans = exporter.getFinishedSpans();
    const request = spans.find((s) => s.name === 'request')!;
    expect(
      spans.filter((s) => s.kind === SpanKind.CLIENT).map((s) => [s.name, s.attributes['db.system.name'], s.parentSpanContext?.spanId]),
    ).toEqual([
      ['SELECT events', 'sqlite', request.spanContext().spanId],
      ['find history_entries', 'memory', request.spanContext().spanId],
    ]);
  });

  it('hands the events in hand over as batches, as the store beneath does (a distributed projector takes them so)', async () => {
    const store = tracedEventStore(new MemoryEventStore(), 'history-svc');
    for (let i = 0; i < 30; i++) await store.appendToStream(`s-${i}`, [{ id: `e${i}`, type: 'T', data: {} }], { expectedRevision: 'any' });
    const batches: number[] = [];
    const subscription = store.subscribeBatches!(
      { streamPrefixes: ['s-'] },
      { max: 100, handle: async (events) => void batches.push(events.length) },
    );
    await subscription.caughtUp();
    await subscription.stop();
    expect(batches).toEqual([30]);
  });

  it('carries the trace over the in-process bus: a PRODUCER span, then the consumer works in the same trace', async () => {
    const inner = new InProcessBus(5);
    const bus = new TracedBus(inner);
    const received: Array<{ message: ReceivedMessage; traceId?: string }> = [];
    let done: () => void;
    const delivered = new Promise<void>((resolve) => (done = resolve));
    await bus.subscribe('topic-a', 'group-a', async (message) => {
      received.push({ message, traceId: trace.getActiveSpan()?.spanContext().traceId });
      done();
    });
    const traceId = await inRequest(async () => {
      await bus.publish('topic-a', [{ key: 'k', value: { a: 1 } }]);
      return trace.getActiveSpan()!.spanContext().traceId;
    });
    await delivered;
    expect(received[0].message.headers?.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(received[0].traceId).toBe(traceId);
    const producer = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.PRODUCER)!;
    expect(producer.name).toBe('send topic-a');
    await new Promise((r) => setTimeout(r, 10));
    const consumer = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.CONSUMER)!;
    expect(consumer).toMatchObject({ name: 'process topic-a' });
    expect(consumer.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
    await inner.close();
  });
});

describe('trace context in event metadata', () => {
  it('lets a projector applying a recent event continue the trace of the request that appended it', async () => {
    const store = new MemoryEventStore();
    const readModels = tracedReadModels(new MemoryReadModelStore(), 'demo-svc', 'memory');
    const traceId = await inRequest(async () => {
      await store.appendToStream('demo-1', [{ id: 'e1', type: 'Done', data: {}, metadata: traceMetadata() }], { expectedRevision: 'any' });
      return trace.getActiveSpan()!.spanContext().traceId;
    });
    const docs = readModels.collection<{ _id: string; revision: number }>('docs');
    const projector = new Projector(store, new MemoryReadModelStore().checkpoints(), {
      name: 'demo',
      streamPrefixes: ['demo-'],
      apply: async (event) => {
        await docs.upsertIfNewer({ _id: event.streamId, revision: event.revision });
      },
    });
    await projector.start();
    await projector.stop();
    const updates = exporter.getFinishedSpans().filter((s) => s.name === 'update docs');
    expect(updates.map((s) => s.spanContext().traceId)).toEqual([traceId]);
  });
});

it('replays an old event (a start-up rebuild) in no trace', async () => {
  const traceparent = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
  const event = { id: 'e', streamId: 's', revision: 0, position: 0n, type: 'T', data: {}, metadata: { traceparent }, createdAt: 1_000 };
  const seen = (now: number) => withEventTraceContext(event, async () => trace.getSpanContext(context.active())?.traceId, now);
  expect(await seen(2_000)).toBe('1'.repeat(32));
  expect(await seen(1_000 + 61_000)).toBeUndefined();
});
