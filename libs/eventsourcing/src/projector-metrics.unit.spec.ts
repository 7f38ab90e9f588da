import { randomUUID } from 'node:crypto';
import { MemoryEventStore } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { startMetrics, stopMetrics } from '@udp/telemetry';
import { collectingReader, waitUntil } from '@udp/test-kit';
import { Projector } from './projector';
import { writeSide } from './command-handler';
import { commandHandler } from './command-handler';
import { type Decider, foldByEvolve } from './decider';

const collected = collectingReader();
beforeAll(() => startMetrics({ serviceName: 'test', readers: [collected.reader] }));
afterAll(() => stopMetrics());

const value = async (name: string, projection: string) =>
  (await collected.points(name)).find((p) => p.attributes['udp.projection'] === projection)?.value;

describe('projection lag and publisher backlog', () => {
  it('shows the events a projector has not applied, how old the oldest is, and nothing once caught up', async () => {
    // Given a projector whose projection is stuck on its first event, and a publisher that keeps up
    const store = new MemoryEventStore();
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const projector = new Projector(
      store,
      new MemoryReadModelStore().checkpoints(),
      { name: 'slow-view', streamPrefixes: ['lag-'], apply: () => stuck },
      { service: 'svc-a' },
    );
    const publisher = new Projector(
      store,
      new MemoryReadModelStore().checkpoints(),
      { name: 'changes', streamPrefixes: ['lag-'], apply: async () => undefined },
      { service: 'svc-a', publishes: true },
    );
    await projector.start();
    await publisher.start();

    // When three events are stored
    const id = randomUUID();
    await store.appendToStream(
      `lag-${id}`,
      [1, 2, 3].map((n) => ({ id: randomUUID(), type: `E${n}`, data: {} })),
      {
        expectedRevision: 'no_stream',
      },
    );
    await publisher.caughtUp();

    // Then the stuck projection lags by all three, the publisher by none
    await waitUntil(async () => (await value('udp.projection.lag.events', 'slow-view')) === 3);
    expect(await value('udp.projection.lag.seconds', 'slow-view')).toBeGreaterThanOrEqual(0);
    expect(await value('udp.projection.lag.events', 'changes')).toBe(0);
    expect(await value('udp.publisher.backlog', 'changes')).toBe(0);
    expect(await value('udp.publisher.backlog', 'slow-view')).toBeUndefined();
    const point = (await collected.points('udp.projection.lag.events')).find((p) => p.attributes['udp.projection'] === 'slow-view');
    expect(point?.attributes['udp.service']).toBe('svc-a');

    // And once it is released, its lag is gone (read again after the one-second memo)
    release();
    await projector.caughtUp();
    await waitUntil(async () => (await value('udp.projection.lag.events', 'slow-view')) === 0, 5000);
    expect(await value('udp.projection.lag.seconds', 'slow-view')).toBe(0);
    await projector.stop();
    await publisher.stop();
  });

  it('times how long a write waited for its own read model', async () => {
    type Cmd = { type: 'Add'; data: Record<string, never>; metadata: { now: number } };
    type Evt = { type: 'Added'; data: Record<string, never> };
    const evolve = (n: number) => n + 1;
    const decider: Decider<Cmd, Evt, number> = {
      decide: () => [{ type: 'Added', data: {} }],
      evolve,
      fold: foldByEvolve(evolve),
      initialState: () => 0,
    };
    const store = new MemoryEventStore();
    const projector = new Projector(
      store,
      new MemoryReadModelStore().checkpoints(),
      { name: 'view', streamPrefixes: ['ryw-'], apply: async () => undefined },
      { service: 'svc-b' },
    );
    await projector.start();
    const handle = commandHandler(
      {
        category: 'ryw-',
        streamOf: (id: string) => ({ id: `ryw-${id}` }),
        idOf: (streamId) => streamId.slice(4),
        decider,
        events: { parse: () => ({ type: 'Added', data: {} }) },
        conflictRetries: 0,
      },
      { write: writeSide({ store, projector, readYourWritesTimeoutMs: 1000 }), now: Date.now },
    );
    await handle(randomUUID(), { type: 'Add', data: {} });
    const waits = await collected.points('udp.read_your_writes.wait.duration');
    expect(waits).toEqual([{ attributes: { 'udp.service': 'svc-b', 'udp.visible': true }, value: 1 }]);
    await projector.stop();
  });
});
