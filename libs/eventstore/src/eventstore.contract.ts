import { randomUUID } from 'node:crypto';
import { waitUntil } from '@udp/test-kit';
import { type EventStore, type RecordedEvent, WrongExpectedRevisionError } from './port';

/**
 * The behaviour every event-store adapter must have. Each adapter's spec calls this with a factory;
 * the embedded adapters must pass exactly what the real server passes.
 */
export function eventStoreContract(adapter: string, open: () => Promise<EventStore>) {
  describe(`EventStore contract: ${adapter}`, () => {
    let store: EventStore;
    // Unique stream names keep tests independent even on a shared server.
    const stream = (name: string) => `contract${randomUUID().replace(/-/g, '')}-${name}`;
    const event = (type: string, data: Record<string, unknown> = {}) => ({ id: randomUUID(), type, data });

    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    it('reads a missing stream as empty with revision -1', async () => {
      expect(await store.readStream(stream('missing'))).toEqual({ revision: -1, events: [] });
    });

    it('appends and reads back in order, revisions from 0', async () => {
      const s = stream('order');
      const result = await store.appendToStream(s, [event('A', { n: 1 }), event('B', { n: 2 })], { expectedRevision: 'no_stream' });
      expect(result.nextRevision).toBe(1);
      await store.appendToStream(s, [event('C', { n: 3 })], { expectedRevision: 1 });
      const read = await store.readStream(s);
      expect(read.revision).toBe(2);
      expect(read.events.map((e) => [e.type, e.revision, e.data.n])).toEqual([
        ['A', 0, 1],
        ['B', 1, 2],
        ['C', 2, 3],
      ]);
      expect(read.events.every((e) => e.streamId === s)).toBe(true);
    });

    it('reads a stream from a revision on, still naming its last revision', async () => {
      const s = stream('from');
      await store.appendToStream(
        s,
        ['A', 'B', 'C'].map((t) => event(t)),
        { expectedRevision: 'no_stream' },
      );
      const tail = await store.readStream(s, { fromRevision: 1 });
      expect([tail.revision, tail.events.map((e) => e.type)]).toEqual([2, ['B', 'C']]);
      const none = await store.readStream(s, { fromRevision: 3 });
      expect([none.revision, none.events]).toEqual([2, []]);
    });

    it('refuses an append on a wrong expected revision and writes nothing', async () => {
      const s = stream('occ');
      await store.appendToStream(s, [event('A')], { expectedRevision: 'no_stream' });
      await expect(store.appendToStream(s, [event('B')], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(
        WrongExpectedRevisionError,
      );
      await expect(store.appendToStream(s, [event('B')], { expectedRevision: 5 })).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      expect((await store.readStream(s)).events.map((e) => e.type)).toEqual(['A']);
    });

    it('lets exactly one of two racing appends at the same revision win', async () => {
      const s = stream('race');
      await store.appendToStream(s, [event('A')], { expectedRevision: 'no_stream' });
      const results = await Promise.allSettled([
        store.appendToStream(s, [event('B1')], { expectedRevision: 0 }),
        store.appendToStream(s, [event('B2')], { expectedRevision: 0 }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((await store.readStream(s)).events).toHaveLength(2);
    });

    it('accepts any revision with "any"', async () => {
      const s = stream('any');
      await store.appendToStream(s, [event('A')], { expectedRevision: 'any' });
      await store.appendToStream(s, [event('B')], { expectedRevision: 'any' });
      expect((await store.readStream(s)).revision).toBe(1);
    });

    it('treats a retried append of the same event ids as done (idempotent)', async () => {
      const s = stream('idem');
      const batch = [event('A'), event('B')];
      await store.appendToStream(s, batch, { expectedRevision: 'no_stream' });
      const again = await store.appendToStream(s, batch, { expectedRevision: 'no_stream' });
      expect(again.nextRevision).toBe(1);
      expect((await store.readStream(s)).events).toHaveLength(2);
    });

    it('recognises a retried append at an expected revision, also after later appends, and with "any" right after', async () => {
      const s = stream('idem-later');
      await store.appendToStream(s, [event('A')], { expectedRevision: 'no_stream' });
      const retried = [event('B'), event('C')];
      const first = await store.appendToStream(s, retried, { expectedRevision: 0 });
      await store.appendToStream(s, [event('D')], { expectedRevision: 2 });
      // The same ids at the same expected revision: done already, nothing stored twice, the stream's revision answered
      const again = await store.appendToStream(s, retried, { expectedRevision: 0 });
      expect(again.nextRevision).toBe(3);
      expect(again.position).toBe(first.position);
      const any = [event('E')];
      await store.appendToStream(s, any, { expectedRevision: 'any' });
      await store.appendToStream(s, any, { expectedRevision: 'any' });
      expect((await store.readStream(s)).events.map((e) => e.type)).toEqual(['A', 'B', 'C', 'D', 'E']);
      // Other ids at a revision that moved: a conflict, as ever
      await expect(store.appendToStream(s, [event('F')], { expectedRevision: 0 })).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    });

    it('keeps event data and metadata intact', async () => {
      const s = stream('data');
      const data = { text: 'é ü 🎧', nested: { list: [1, 2.5, null, true] }, empty: '' };
      await store.appendToStream(s, [{ ...event('A', data), metadata: { correlationId: 'c-1' } }], { expectedRevision: 'no_stream' });
      const [read] = (await store.readStream(s)).events;
      expect(read.data).toEqual(data);
      expect(read.metadata).toEqual({ correlationId: 'c-1' });
    });

    it('deletes a stream: nothing of it can be read afterwards, other streams untouched', async () => {
      const s = stream('erase');
      const other = stream('keep');
      await store.appendToStream(s, [event('A'), event('B')], { expectedRevision: 'no_stream' });
      await store.appendToStream(other, [event('K')], { expectedRevision: 'no_stream' });
      await store.deleteStream(s);
      expect(await store.readStream(s)).toEqual({ revision: -1, events: [] });
      expect(await store.readStream(s, { fromRevision: 1 })).toEqual({ revision: -1, events: [] });
      expect((await store.readStream(other)).events.map((e) => e.type)).toEqual(['K']);
      await store.deleteStream(s); // again: no error
      await store.deleteStream(stream('never-existed'));
    });

    it('starts a deleted stream afresh on the next write (no_stream), without its old events', async () => {
      const s = stream('reborn');
      await store.appendToStream(s, [event('Old1'), event('Old2'), event('Old3')], { expectedRevision: 'no_stream' });
      await store.deleteStream(s);
      const first = await store.appendToStream(s, [event('New1')], { expectedRevision: 'no_stream' });
      const read = await store.readStream(s);
      expect(read.events.map((e) => e.type)).toEqual(['New1']);
      // Revisions may continue after the deleted ones (KurrentDB) or restart (SQLite): only their order is promised.
      expect(read.revision).toBe(first.nextRevision);
      await store.appendToStream(s, [event('New2')], { expectedRevision: read.revision });
      await expect(store.appendToStream(s, [event('X')], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(
        WrongExpectedRevisionError,
      );
      expect((await store.readStream(s)).events.map((e) => e.type)).toEqual(['New1', 'New2']);
    });

    it('keeps its write epoch through its own appends, moves it with a deletion, and refuses an append from an older one', async () => {
      if (!store.writeEpoch) return; // a store without one (KurrentDB): every write reads its stream
      const s = stream('epoch');
      const epoch = store.writeEpoch();
      const first = await store.appendToStream(s, [event('A')], { expectedRevision: 'no_stream', unchangedSinceEpoch: epoch });
      expect(first.epoch).toBe(epoch);
      await store.appendToStream(stream('epoch-other'), [event('O')], { expectedRevision: 'no_stream' });
      expect(store.writeEpoch()).toBe(epoch);
      await store.deleteStream(stream('epoch-gone'));
      expect(store.writeEpoch()).not.toBe(epoch);
      // The revision matches, the epoch does not: refused, nothing written.
      await expect(store.appendToStream(s, [event('B')], { expectedRevision: 0, unchangedSinceEpoch: epoch })).rejects.toBeInstanceOf(
        WrongExpectedRevisionError,
      );
      expect((await store.readStream(s)).events.map((e) => e.type)).toEqual(['A']);
      const now = store.writeEpoch();
      expect((await store.appendToStream(s, [event('C')], { expectedRevision: 0, unchangedSinceEpoch: now })).epoch).toBe(now);
    });

    it('lists the existing streams with a prefix, not deleted ones nor other prefixes', async () => {
      const prefix = `list${randomUUID().replace(/-/g, '')}-`;
      for (const name of ['a', 'b', 'c']) await store.appendToStream(`${prefix}${name}`, [event('A')], { expectedRevision: 'no_stream' });
      await store.appendToStream(`${prefix.slice(0, -1)}x`, [event('A')], { expectedRevision: 'no_stream' });
      await store.deleteStream(`${prefix}b`);
      expect((await store.listStreams(prefix)).sort()).toEqual([`${prefix}a`, `${prefix}c`]);
      expect(await store.listStreams(`${prefix}zz`)).toEqual([]);
    });

    it('lists exactly the streams that start with a prefix, at the edges of the code space', async () => {
      // Erasure finds a user's streams by prefix: a name the range misses survives it (issue 27 #2).
      const base = `edge${randomUUID().replace(/-/g, '')}-`;
      const tails = [
        '',
        'a',
        '\u{10FFFF}',
        '\u{10FFFF}tail',
        '\u{10FFFF}\u{10FFFF}',
        '\uFFFF',
        '\uFFFFz',
        '\uE000',
        '\u{1F3A7}',
        '\u{10000}',
        '\u007F',
        '\u0080',
        '\u07FF',
        '\u0800',
        '\uD7FF',
      ];
      const names = tails.map((tail) => base + tail);
      // Just past the prefix, on either side, in code-unit and in code-point order: never listed.
      const outside = [base.slice(0, -1), `${base.slice(0, -1)}.`, `${base.slice(0, -1)}.\u{10FFFF}`];
      for (const name of [...names, ...outside]) await store.appendToStream(name, [event('A')], { expectedRevision: 'no_stream' });
      const listed = async (prefix: string) => (await store.listStreams(prefix)).sort();
      expect(await listed(base)).toEqual([...names].sort());
      for (const tail of tails) {
        const prefix = base + tail;
        expect([prefix, await listed(prefix)]).toEqual([prefix, names.filter((name) => name.startsWith(prefix)).sort()]);
      }
      // A prefix that ends in the highest code point, and one equal to a whole name.
      expect(await listed(`${base}\u{10FFFF}`)).toEqual(
        [`${base}\u{10FFFF}`, `${base}\u{10FFFF}\u{10FFFF}`, `${base}\u{10FFFF}tail`].sort(),
      );
      expect(await listed(`${base}\u{10FFFF}tail`)).toEqual([`${base}\u{10FFFF}tail`]);
      expect(await listed(`${base}\u{10FFFF}x`)).toEqual([]);
    });

    it('lists the streams of a prefix made of the highest code point only', async () => {
      // No string is above every name starting with U+10FFFF: the range has no upper end.
      const top = `\u{10FFFF}\u{10FFFF}${randomUUID()}`;
      await store.appendToStream(`${top}-a`, [event('A')], { expectedRevision: 'no_stream' });
      await store.appendToStream(`${top}\u{10FFFF}`, [event('A')], { expectedRevision: 'no_stream' });
      expect((await store.listStreams(top)).sort()).toEqual([`${top}-a`, `${top}\u{10FFFF}`].sort());
      expect((await store.listStreams('\u{10FFFF}\u{10FFFF}')).filter((s) => s.startsWith(top)).sort()).toEqual(
        [`${top}-a`, `${top}\u{10FFFF}`].sort(),
      );
    });

    it("never delivers a deleted stream's events again, not even to a subscription from the start", async () => {
      const prefix = `gone${randomUUID().replace(/-/g, '')}`;
      const erased = `${prefix}-erased`;
      const kept = `${prefix}-kept`;
      await store.appendToStream(erased, [event('E1'), event('E2')], { expectedRevision: 'no_stream' });
      await store.appendToStream(kept, [event('K1')], { expectedRevision: 'no_stream' });
      const live: string[] = [];
      const following = store.subscribe({ streamPrefixes: [prefix] }, async (e) => void live.push(e.type));
      await following.caughtUp();
      await store.deleteStream(erased);
      await store.appendToStream(erased, [event('N1')], { expectedRevision: 'no_stream' });
      await waitUntil(() => live.includes('N1'));
      expect(live).toEqual(['E1', 'E2', 'K1', 'N1']);
      await following.stop();

      const replayed: string[] = [];
      const fromStart = store.subscribe(
        { streamPrefixes: [prefix] },
        async (e) => void replayed.push(`${e.type}@${e.streamId === erased ? 'erased' : 'kept'}`),
      );
      await fromStart.caughtUp();
      expect(replayed).toEqual(['K1@kept', 'N1@erased']);
      await fromStart.stop();
    });

    it('delivers matching events of all streams in global order, from a position, catching up then live', async () => {
      const prefix = `sub${randomUUID().replace(/-/g, '')}`;
      const a = `${prefix}-a`;
      const b = `${prefix}-b`;
      await store.appendToStream(a, [event('A1')], { expectedRevision: 'no_stream' });
      await store.appendToStream(`other${randomUUID().replace(/-/g, '')}-x`, [event('X')], { expectedRevision: 'no_stream' });
      await store.appendToStream(b, [event('B1')], { expectedRevision: 'no_stream' });

      const seen: RecordedEvent[] = [];
      const sub = store.subscribe({ streamPrefixes: [prefix] }, async (e) => void seen.push(e));
      await sub.caughtUp();
      expect(seen.map((e) => e.type)).toEqual(['A1', 'B1']);

      await store.appendToStream(a, [event('A2')], { expectedRevision: 0 });
      await waitUntil(() => seen.length === 3);
      expect(seen.map((e) => e.type)).toEqual(['A1', 'B1', 'A2']);
      expect(seen[0].position < seen[1].position && seen[1].position < seen[2].position).toBe(true);
      await sub.stop();

      const resumed: string[] = [];
      const again = store.subscribe({ streamPrefixes: [prefix], fromPosition: seen[0].position }, async (e) => void resumed.push(e.type));
      await again.caughtUp();
      expect(resumed).toEqual(['B1', 'A2']);
      await again.stop();
    });

    /** A subscription to `prefix` whose handler holds the first event until `release`; `handled` lists the types handled. */
    /**
     * A subscription whose handler holds the first event of `prefix` until `release`; `holding` resolves once it does,
     * so the subscription has passed every other stream's event before it (on a store other suites write to as well,
     * it may still be catching up on theirs before).
     */
    const heldSubscription = (prefix: string) => {
      let release!: () => void;
      let holds!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const holding = new Promise<void>((resolve) => (holds = resolve));
      const handled: string[] = [];
      const sub = store.subscribe({ streamPrefixes: [prefix] }, async (e) => {
        if (handled.length === 0) {
          holds();
          await held;
        }
        handled.push(e.type);
      });
      return { sub, release, handled, holding };
    };

    it("counts a subscription's backlog: its streams' events not handled yet, up to a limit, and the oldest one's time", async () => {
      const prefix = `lag${randomUUID().replace(/-/g, '')}`;
      const before = Date.now();
      await store.appendToStream(`${prefix}-a`, [event('A1'), event('A2')], { expectedRevision: 'no_stream' });
      await store.appendToStream(`other${randomUUID().replace(/-/g, '')}-x`, [event('X')], { expectedRevision: 'no_stream' });
      await store.appendToStream(`${prefix}-b`, [event('B1')], { expectedRevision: 'no_stream' });

      // The handler holds the first event: it is not handled yet, so all three count.
      const { sub, release, handled, holding } = heldSubscription(prefix);
      // Held at A1: every event before it passed, so the next two of the store are A1 and A2.
      await holding;
      await waitUntil(async () => (await sub.backlog(100)).events === 3);
      const behind = await sub.backlog(100);
      expect(behind.oldestCreatedAt).toBeGreaterThanOrEqual(before - 1000);
      expect(behind.oldestCreatedAt).toBeLessThanOrEqual(Date.now());
      expect((await sub.backlog(2)).events).toBe(2);

      release();
      await sub.caughtUp();
      expect(handled).toEqual(['A1', 'A2', 'B1']);
      expect(await sub.backlog(100)).toEqual({ events: 0, oldestCreatedAt: undefined });
      await store.appendToStream(`${prefix}-a`, [event('A3')], { expectedRevision: 1 });
      await waitUntil(() => handled.length === 4);
      expect((await sub.backlog(100)).events).toBe(0);
      await sub.stop();
    });

    it('caughtUp ends once the events stored before it are handled, while other appends keep coming', async () => {
      const prefix = stream('busy');
      const handled: string[] = [];
      // A slow handler and an append every few milliseconds: the subscription is never idle.
      const sub = store.subscribe({ streamPrefixes: [prefix] }, async (e) => {
        await new Promise((resolve) => setTimeout(resolve, 3));
        handled.push(e.type);
      });
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          await store.appendToStream(`${prefix}-w`, [event(`W${i}`)], { expectedRevision: i === 0 ? 'no_stream' : i - 1 });
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      })();
      try {
        await waitUntil(() => handled.length >= 5);
        await store.appendToStream(`${prefix}-mark`, [event('MARK')], { expectedRevision: 'no_stream' });
        await sub.caughtUp();
        expect(handled).toContain('MARK');
      } finally {
        writing = false;
        await writer;
        await sub.stop();
      }
    }, 20_000);

    it('counts the backlog of a prefix that holds characters beyond U+FFFF (two code units each)', async () => {
      const prefix = `lag${randomUUID().replace(/-/g, '')}\u{1F3A7}\u{10FFFF}`;
      await store.appendToStream(`${prefix}-a`, [event('A1'), event('A2')], { expectedRevision: 'no_stream' });
      await store.appendToStream(`${prefix.slice(0, -2)}-b`, [event('B1')], { expectedRevision: 'no_stream' });
      const { sub, release, handled } = heldSubscription(prefix);
      try {
        await waitUntil(async () => (await sub.backlog(100)).events === 2);
      } finally {
        release();
      }
      await sub.caughtUp();
      expect(handled).toEqual(['A1', 'A2']);
      await sub.stop();
    });
  });
}
