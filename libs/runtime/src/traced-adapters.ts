import { type Attributes, type Span, SpanKind, SpanStatusCode, TraceFlags, context, propagation, trace } from '@opentelemetry/api';
import { type Bus, type BusMessage, type Consumer, type MessageHandler, type SubscribeOptions, inConsumerSpan } from '@udp/bus';
import type { EventStore } from '@udp/eventstore';
import { type Collection, type Document, type ReadModelStore, withCollections } from '@udp/readmodel';

/**
 * CLIENT spans for the embedded adapters, which no library instruments (SQLite event store, in-memory read models,
 * in-process bus), named and attributed as the libraries' instrumentations name theirs in distributed mode
 * (database spans `<operation> <collection>` as the MongoDB instrumentation does, `send <topic>` as the kafkajs one),
 * so a trace has the same shape in both modes. Like those, they only join a trace in progress: background work
 * (projectors catching up) makes no root spans.
 */
const tracer = () => trace.getTracer('udp-embedded-adapters');

async function inSpan<T>(name: string, kind: SpanKind, attributes: Attributes, work: (span?: Span) => Promise<T>): Promise<T> {
  // In a recorded trace: a local span, or the context of the request that appended the event a projector is
  // applying. A trace that is not recorded (no collector and no debug block asked for) gets no span at all: the
  // sampler would only make a non-recording one, at the cost of a context switch around every store call.
  const parent = trace.getSpanContext(context.active());
  if (!parent || !trace.isSpanContextValid(parent) || (parent.traceFlags & TraceFlags.SAMPLED) === 0) return work();
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

export function tracedEventStore(store: EventStore, namespace: string): EventStore {
  const db = (operation: string): Attributes => ({
    'db.system.name': 'sqlite',
    'db.namespace': namespace,
    'db.operation.name': operation,
    'db.collection.name': 'events',
  });
  return {
    readStream: (streamId, options) => inSpan('SELECT events', SpanKind.CLIENT, db('SELECT'), () => store.readStream(streamId, options)),
    appendToStream: (streamId, events, options) =>
      inSpan('INSERT events', SpanKind.CLIENT, db('INSERT'), () => store.appendToStream(streamId, events, options)),
    deleteStream: (streamId) => inSpan('DELETE events', SpanKind.CLIENT, db('DELETE'), () => store.deleteStream(streamId)),
    listStreams: (prefix) => inSpan('SELECT streams', SpanKind.CLIENT, db('SELECT'), () => store.listStreams(prefix)),
    subscribe: (options, handler) => store.subscribe(options, handler),
    // Without it a distributed projector applies and checkpoints event by event (the store can hand it batches).
    ...(store.subscribeBatches && { subscribeBatches: store.subscribeBatches.bind(store) }),
    // Without it every write reads its stream before deciding, even when the state in memory is current.
    ...(store.writeEpoch && { writeEpoch: store.writeEpoch.bind(store) }),
    ...(store.highestPosition && { highestPosition: store.highestPosition.bind(store) }),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}

export function tracedReadModels(
  readModels: ReadModelStore,
  namespace: string,
  system: 'sqlite' | 'memory' | 'postgresql',
): ReadModelStore {
  const wrap = <T extends Document>(name: string, collection: Collection<T>): Collection<T> => {
    const db = (operation: string): Attributes => ({
      'db.system.name': system,
      'db.namespace': namespace,
      'db.operation.name': operation,
      'db.collection.name': name,
    });
    return aroundEachCall(collection, (operation, work) => inSpan(`${operation} ${name}`, SpanKind.CLIENT, db(operation), work));
  };
  return withCollections(readModels, <T extends Document>(name: string) => wrap(name, readModels.collection<T>(name)));
}

/** The in-process bus with a PRODUCER span per publish and W3C trace context in the message headers, as on Kafka. */
export class TracedBus implements Bus {
  constructor(readonly inner: Bus) {}

  get durable(): boolean {
    return this.inner.durable;
  }

  publish(topic: string, messages: BusMessage[]): Promise<void> {
    const attributes = {
      'messaging.system': 'in-process',
      'messaging.destination.name': topic,
      'messaging.operation.name': 'send',
      'messaging.operation.type': 'send',
    };
    return inSpan(`send ${topic}`, SpanKind.PRODUCER, attributes, (span) => {
      if (!span) return this.inner.publish(topic, messages);
      const carried = messages.map((m) => {
        const headers: Record<string, string> = { ...(m.headers ?? {}) };
        propagation.inject(context.active(), headers);
        return { ...m, headers };
      });
      return this.inner.publish(topic, carried);
    });
  }

  subscribe(topics: string | readonly string[], groupId: string, handler: MessageHandler, options?: SubscribeOptions): Promise<Consumer> {
    return this.inner.subscribe(
      topics,
      groupId,
      async (message) => {
        if (!message.headers?.traceparent) return handler(message);
        // The consumer's work continues the publisher's trace, as the kafkajs instrumentation does.
        const attributes = { 'messaging.system': 'in-process', 'messaging.consumer.group.name': groupId };
        await inConsumerSpan(tracer(), context.active(), message, attributes, handler);
      },
      options,
    );
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** What a call of a collection does, as a span names it. */
export type CollectionOperation = 'find' | 'count' | 'update' | 'delete';

/**
 * `collection` with every call (a prepared find's runs included) made through `around`, told which operation it is:
 * one list of the collection's calls for every wrapper that does the same around each (tracing, tests that queue
 * them), so a call added to the port cannot be left out of one of them. Here, not in libs/readmodel: a write runs it
 * for every store call, and this file is on that path already (tools/embedded/write-path.api.spec.ts counts them).
 */
export function aroundEachCall<T extends Document>(
  collection: Collection<T>,
  around: <R>(operation: CollectionOperation, call: () => Promise<R>) => Promise<R>,
): Collection<T> {
  return {
    get: (id) => around('find', () => collection.get(id)),
    getMany: (ids) => around('find', () => collection.getMany(ids)),
    find: (filter, options) => around('find', () => collection.find(filter, options)),
    prepareFind: (filter, options) => {
      const run = collection.prepareFind(filter, options);
      return (values, limit) => around('find', () => run(values, limit));
    },
    count: (filter) => around('count', () => collection.count(filter)),
    upsertIfNewer: (doc) => around('update', () => collection.upsertIfNewer(doc)),
    upsertManyIfNewer: (docs) => around('update', () => collection.upsertManyIfNewer(docs)),
    updateMany: (filter, set) => around('update', () => collection.updateMany(filter, set)),
    deleteMany: (filter) => around('delete', () => collection.deleteMany(filter)),
  };
}
