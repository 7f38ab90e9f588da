import { EventEmitter } from 'node:events';
import type { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { START } from '@kurrent/kurrentdb-client';
import { waitUntil } from '@udp/test-kit';
import { EsdbEventStore, decodePosition, encodePosition } from './esdb';
import type { RecordedEvent } from './port';

/**
 * The KurrentDB subscription's recovery, against a stand-in client whose `$all` stream fails mid-way, then ends, then
 * stays open: every event is handled once, in order, and each new subscription starts from the last one handled,
 * its full position (commit, prepare) included, so two events of one append are never confused.
 */
interface Stored {
  position: { commit: bigint; prepare: bigint };
  streamId: string;
  id: string;
}

// e2 and e3 share one commit position, two prepare positions, as an explicit transaction of the legacy TCP API gives
// them (an append over gRPC gives each event commit == prepare): the case where a commit position alone is not enough.
const LOG: Stored[] = [
  { position: { commit: 100n, prepare: 100n }, streamId: 'h-a', id: 'e1' },
  { position: { commit: 200n, prepare: 200n }, streamId: 'h-a', id: 'e2' },
  { position: { commit: 200n, prepare: 260n }, streamId: 'h-a', id: 'e3' },
  { position: { commit: 300n, prepare: 300n }, streamId: 'other-x', id: 'x1' },
  { position: { commit: 400n, prepare: 400n }, streamId: 'h-b', id: 'e4' },
  { position: { commit: 500n, prepare: 500n }, streamId: 'h-b', id: 'e5' },
  { position: { commit: 500n, prepare: 560n }, streamId: 'h-a', id: 'e6' },
];

const after = (from: unknown) =>
  LOG.filter((e) => {
    if (from === START) return true;
    const { commit, prepare } = from as Stored['position'];
    return e.position.commit > commit || (e.position.commit === commit && e.position.prepare > prepare);
  });

const resolved = (e: Stored, revision: number) => ({
  event: {
    id: e.id,
    streamId: e.streamId,
    revision: BigInt(revision),
    type: 'Happened',
    data: {},
    metadata: {},
    created: new Date(),
    position: e.position,
  },
  commitPosition: e.position.commit,
});

/** What each subscription does after its events: fail, end, or stay open (then say it caught up). */
type Script = { deliver: number; then: 'fail' | 'end' | 'open' };

function standIn(scripts: Script[]) {
  const from: unknown[] = [];
  const client = {
    subscribeToAll({ fromPosition }: { fromPosition: unknown }) {
      from.push(fromPosition);
      const script = scripts.shift() ?? { deliver: Infinity, then: 'open' };
      const emitter = new EventEmitter();
      let closed = false;
      let close = () => undefined as void;
      // The server filters by prefix (the subscriptions here are all to `h-`).
      const events = after(fromPosition)
        .filter((e) => e.streamId.startsWith('h-'))
        .slice(0, script.deliver);
      async function* iterate() {
        for (const e of events) yield resolved(e, LOG.filter((x) => x.streamId === e.streamId).indexOf(e));
        if (script.then === 'fail') throw new Error('connection lost');
        if (script.then === 'end') return;
        emitter.emit('caughtUp');
        if (!closed) await new Promise<void>((resolve) => (close = resolve));
      }
      const iterator = iterate();
      return Object.assign(emitter, {
        [Symbol.asyncIterator]: () => iterator,
        unsubscribe: async () => {
          closed = true;
          close();
        },
      });
    },
    async getStreamMetadata() {
      return { metadata: undefined };
    },
    async dispose() {},
  };
  return { client: client as unknown as KurrentDBClient, from };
}

describe('KurrentDB subscription recovery (stand-in client)', () => {
  it('subscribes again from the last handled event after a failure and after an end, losing and repeating nothing', async () => {
    const { client, from } = standIn([
      { deliver: 2, then: 'fail' },
      { deliver: 2, then: 'end' },
      { deliver: Infinity, then: 'open' },
    ]);
    const store = new EsdbEventStore(client);
    const problems: string[] = [];
    store.onSubscriptionProblem = (error) => problems.push((error as Error).message);
    const handled: RecordedEvent[] = [];
    const sub = store.subscribe({ streamPrefixes: ['h-'] }, async (e) => void handled.push(e));

    await waitUntil(() => handled.length === 6, 5000, 'every event handled');
    await sub.caughtUp();
    expect(handled.map((e) => e.id)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
    // Positions are one ordered bigint each, distinct even within one append.
    const positions = handled.map((e) => e.position);
    expect(positions.every((p, i) => i === 0 || p > positions[i - 1])).toBe(true);
    expect(decodePosition(handled[2].position)).toEqual({ commit: 200n, prepare: 260n });
    // Resumed from the full position of the last handled event: e2 (the middle of an append), then e4.
    expect(from).toEqual([START, { commit: 200n, prepare: 200n }, { commit: 400n, prepare: 400n }]);
    expect(problems).toEqual(['connection lost', 'the server ended the subscription']);
    await sub.stop();
  });

  it('resumes from a checkpoint given as a position, and reads an old commit-only checkpoint as (commit, commit)', async () => {
    const { client, from } = standIn([]);
    const store = new EsdbEventStore(client);
    const handled: string[] = [];
    const sub = store.subscribe(
      { streamPrefixes: ['h-'], fromPosition: encodePosition({ commit: 200n, prepare: 260n }) },
      async (e) => void handled.push(e.id),
    );
    await sub.caughtUp();
    expect(handled).toEqual(['e4', 'e5', 'e6']);
    await sub.stop();

    const old = store.subscribe({ streamPrefixes: ['h-'], fromPosition: 200n }, async () => undefined);
    await old.caughtUp();
    expect(from[1]).toEqual({ commit: 200n, prepare: 200n });
    await old.stop();
  });

  it('stops for good when the handler throws, and says why', async () => {
    const { client } = standIn([]);
    const store = new EsdbEventStore(client);
    const sub = store.subscribe({ streamPrefixes: ['h-'] }, async (e) => {
      if (e.id === 'e2') throw new Error('handler broke');
    });
    await expect(sub.caughtUp()).rejects.toThrow('handler broke');
    await sub.stop();
  });
});
