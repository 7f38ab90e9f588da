import { MemoryEventStore, type RecordedEvent } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { INLINE_CHUNK, InlineProjector, REPLAY_CHUNK } from './inline-projector';
import type { Projection } from './projector';

/** A projection that records what it applied, and holds the events of `held` streams (or `stream@revision`) until `release`. */
function recordingProjection() {
  const applied: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = new Set<string>();
  const projection: Projection = {
    name: 'rows',
    streamPrefixes: ['s-'],
    async apply(event) {
      if (held.has(event.streamId) || held.has(`${event.streamId}@${event.revision}`)) await gate;
      applied.push(`${event.streamId}@${event.revision}`);
    },
  };
  return { projection, applied, held, release: () => release() };
}

/** A projection that takes batches, each to `applyBatch`; given an event alone, it fails. */
function batchProjection(applyBatch: NonNullable<Projection['applyBatch']>): Projection {
  return {
    name: 'rows',
    streamPrefixes: ['s-'],
    apply: async () => {
      throw new Error('a batch-taking projection is given batches');
    },
    applyBatch,
  };
}

async function append(store: MemoryEventStore, streamId: string, count: number, from = -1): Promise<RecordedEvent[]> {
  await store.appendToStream(
    streamId,
    Array.from({ length: count }, (_, i) => ({ id: `${streamId}-${from + 1 + i}`, type: 'T', data: {} })),
    { expectedRevision: from === -1 ? 'no_stream' : from },
  );
  return (await store.readStream(streamId, { fromRevision: from + 1 })).events;
}

describe('InlineProjector', () => {
  it('moves its checkpoint only past appends whose rows are all applied, whatever finished first', async () => {
    const store = new MemoryEventStore();
    const readModels = new MemoryReadModelStore();
    const { projection, applied, held, release } = recordingProjection();
    const inline = new InlineProjector(store, readModels.checkpoints(), projection);
    await inline.start();
    held.add('s-a');
    const first = inline.applyAppended(await append(store, 's-a', 2));
    const second = await append(store, 's-b', 1);
    await inline.applyAppended(second);
    // s-b is applied, s-a (stored before it) is not: a restart must apply s-a again, so the checkpoint stays before it.
    expect(applied).toEqual(['s-b@0']);
    expect(await readModels.checkpoints().load('rows')).toBeNull();
    release();
    await first;
    expect(await readModels.checkpoints().load('rows')).toBe(second[0].position);
  });

  it("applies one stream's appends in their order, even when the first is still being applied", async () => {
    const store = new MemoryEventStore();
    const { projection, applied, held, release } = recordingProjection();
    const inline = new InlineProjector(store, new MemoryReadModelStore().checkpoints(), projection);
    await inline.start();
    held.add('s-a@0');
    const first = inline.applyAppended(await append(store, 's-a', 1));
    const later = inline.applyAppended(await append(store, 's-a', 1, 0));
    await new Promise((resolve) => setImmediate(resolve));
    // The second append waits for the first, held: nothing of the stream is applied out of order.
    expect(applied).toEqual([]);
    release();
    await Promise.all([first, later]);
    expect(applied).toEqual(['s-a@0', 's-a@1']);
  });

  it("applies the appends of streams with one order key in store order: a user's keys, whatever finished first", async () => {
    const store = new MemoryEventStore();
    const { projection, applied, held, release } = recordingProjection();
    // s-<user>/<key>: the user's streams share one order.
    const inline = new InlineProjector(store, new MemoryReadModelStore().checkpoints(), {
      ...projection,
      orderKey: (streamId) => streamId.split('/')[0],
    });
    await inline.start();
    held.add('s-u/a');
    const first = inline.applyAppended(await append(store, 's-u/a', 1));
    const sameUser = inline.applyAppended(await append(store, 's-u/b', 1));
    const otherUser = inline.applyAppended(await append(store, 's-v/a', 1));
    await otherUser;
    // Another user's stream goes by; the user's second key waits for the first, held.
    expect(applied).toEqual(['s-v/a@0']);
    release();
    await Promise.all([first, sameUser]);
    expect(applied).toEqual(['s-v/a@0', 's-u/a@0', 's-u/b@0']);
  });

  it('applies at start every event stored after its checkpoint (rows a crash lost)', async () => {
    const store = new MemoryEventStore();
    const readModels = new MemoryReadModelStore();
    const stored = await append(store, 's-a', 3);
    await readModels.checkpoints().save('rows', stored[0].position);
    const { projection, applied } = recordingProjection();
    await new InlineProjector(store, readModels.checkpoints(), projection).start();
    expect(applied).toEqual(['s-a@1', 's-a@2']);
    expect(await readModels.checkpoints().load('rows')).toBe(stored[2].position);
  });

  it('replays at start in batches, many streams together in store order, for a projection that takes them', async () => {
    const store = new MemoryEventStore();
    const readModels = new MemoryReadModelStore();
    await append(store, 's-a', REPLAY_CHUNK - 1);
    await append(store, 's-b', 3);
    const last = (await append(store, 's-c', REPLAY_CHUNK)).at(-1)!;
    const batches: string[][] = [];
    const projection = batchProjection(async (events) => void batches.push(events.map((event) => `${event.streamId}@${event.revision}`)));
    await new InlineProjector(store, readModels.checkpoints(), projection).start();
    // 499 + 3 + 500 events: s-a's and the first of s-b, the rest of s-b and most of s-c, the last two of s-c.
    expect(batches.map((batch) => [batch[0], batch.at(-1), batch.length])).toEqual([
      ['s-a@0', 's-b@0', REPLAY_CHUNK],
      ['s-b@1', `s-c@${REPLAY_CHUNK - 3}`, REPLAY_CHUNK],
      [`s-c@${REPLAY_CHUNK - 2}`, `s-c@${REPLAY_CHUNK - 1}`, 2],
    ]);
    expect(await readModels.checkpoints().load('rows')).toBe(last.position);
  });

  it('gives a projection that takes batches an append in chunks, and applies a chunk that failed again whole', async () => {
    const store = new MemoryEventStore();
    const chunks: string[][] = [];
    let failOnce = true;
    const projection = batchProjection(async (events) => {
      if (events[0].revision === INLINE_CHUNK && failOnce) {
        failOnce = false;
        throw new Error('read models briefly failing');
      }
      chunks.push(events.map((event) => `${event.streamId}@${event.revision}`));
    });
    const inline = new InlineProjector(store, new MemoryReadModelStore().checkpoints(), projection, { retryDelayMs: 1 });
    await inline.start();
    await inline.applyAppended(await append(store, 's-a', INLINE_CHUNK * 2 + 5));
    expect(chunks.map((chunk) => [chunk[0], chunk.length])).toEqual([
      ['s-a@0', INLINE_CHUNK],
      [`s-a@${INLINE_CHUNK}`, INLINE_CHUNK],
      [`s-a@${INLINE_CHUNK * 2}`, 5],
    ]);
    expect(inline.healthy()).toBe(true);
  });

  it("tells a stream's readers of the application under way, settled once all of the stream's appends are applied", async () => {
    const store = new MemoryEventStore();
    const { projection, held, release } = recordingProjection();
    const inline = new InlineProjector(store, new MemoryReadModelStore().checkpoints(), projection);
    await inline.start();
    held.add('s-a');
    const first = inline.applyAppended(await append(store, 's-a', 2));
    const second = inline.applyAppended(await append(store, 's-a', 1, 1));
    let settled = false;
    void inline.applying('s-a')!.then(() => (settled = true));
    // Another stream's readers wait for nothing.
    expect(inline.applying('s-b')).toBeNull();
    await inline.applyAppended(await append(store, 's-b', 1));
    expect(settled).toBe(false);
    release();
    await Promise.all([first, second]);
    await inline.applying('s-a');
    expect([settled, inline.applying('s-a')]).toEqual([true, null]);
  });

  it('holds no reader while an application fails and is retried', async () => {
    const store = new MemoryEventStore();
    let failing = true;
    const projection = batchProjection(async () => {
      if (failing) throw new Error('read models failing');
    });
    const inline = new InlineProjector(store, new MemoryReadModelStore().checkpoints(), projection, { retryDelayMs: 1 });
    await inline.start();
    const applied = inline.applyAppended(await append(store, 's-a', 1));
    await inline.applying('s-a');
    expect([inline.healthy(), inline.applying('s-a')]).toEqual([false, null]);
    failing = false;
    await applied;
    expect([inline.healthy(), inline.applying('s-a')]).toEqual([true, null]);
  });
});
