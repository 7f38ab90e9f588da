import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Response } from 'supertest';
import type { Item } from '@udp/contracts';
import { SqliteReadModelStore } from '@udp/readmodel';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';

/**
 * A clear and a batch are one append each, and readers see all of one or none of it. The embedded read models apply a
 * large append in slices, other requests in between: readers polling while a clear of 1,000 entries was applied saw
 * 33-952 of them, a state that never existed, and such a page was kept (answer and ETag) under the version before the
 * clear. Here 4 readers poll the whole list (with and without tombstones) in each of 5 rounds, until the write is
 * answered.
 */
const NOW = 1_700_000_000_000;
const ENTRIES = 1000;
const ROUNDS = 5;
const READERS = 4;
const QUERIES = ['?limit=1000', '?limit=1000&with_deleted=true'];

let dir: string;
let system: TestSystem;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'history-atomic-'));
  const readModels = await SqliteReadModelStore.open({ file: join(dir, 'read-models.sqlite') });
  system = await startTestSystem([
    { prefixes: ['/api/history'], create: (deps) => createHistoryService({ ...deps, now: () => NOW }), adapters: { readModels } },
  ]);
});
afterEach(async () => {
  await system.stop();
  rmSync(dir, { recursive: true, force: true });
});

const items = (round: number) =>
  Array.from({ length: ENTRIES }, (_, i) => ({ item_id: `urn:${round}:${i}`, date: NOW + round * ENTRIES + i }));

interface Read {
  query: string;
  status: number;
  etag: string;
  text: string;
  data: Item[];
}

const read = async (auth: string, query: string, etag?: string): Promise<Read> => {
  const request = system.http.get(`/api/history/v2${query}`).set('authorization', auth);
  const res: Response = await (etag ? request.set('if-none-match', etag) : request);
  return { query, status: res.status, etag: res.headers.etag as string, text: res.text, data: res.status === 200 ? res.body.data : [] };
};

let asked = 0;

/** Every reader reads in turn until `write` is answered (each at least once), the queries shared among them. */
async function readWhile(auth: string, write: () => PromiseLike<Response>): Promise<{ written: Response; reads: Read[] }> {
  let answered = false;
  // A request is a thenable, not a promise: sent once it is awaited.
  const writing = Promise.resolve(write()).finally(() => (answered = true));
  const readers = Array.from({ length: READERS }, async (_, reader) => {
    const reads: Read[] = [];
    // Each read a query not asked before (`after` below every date), so none is answered from the answers kept.
    do reads.push(await read(auth, `${QUERIES[reader % QUERIES.length]}&after=${asked++}`));
    while (!answered);
    return reads;
  });
  const [written, ...reads] = await Promise.all([writing, ...readers]);
  return { written, reads: reads.flat() };
}

/** The reads that show a part of the append: none of the `whole` states (the list before it, the list after it). */
function torn(reads: Read[], whole: Array<(read: Read) => boolean>): Read[] {
  return reads.filter((each) => each.status !== 200 || !whole.some((shows) => shows(each)));
}

/** Reads whose ETag an earlier read had with another body: an answer kept or tagged under a version it does not show. */
function sameTagOtherBody(reads: Read[]): string[] {
  const bodyOf = new Map<string, string>();
  const clashes: string[] = [];
  for (const each of reads.filter((r) => r.status === 200)) {
    const known = bodyOf.get(each.etag);
    if (known === undefined) bodyOf.set(each.etag, each.text);
    else if (known !== each.text) clashes.push(`${each.query}: ${each.etag}`);
  }
  return clashes;
}

/** What a read showed, for the failure's message. */
const shown = (r: Read) => `${r.query}: ${r.status}, ${r.data.filter((i) => !i.deleted).length} live of ${r.data.length}`;

/** The counts of each failure (and of all reads, in the message only), with a few examples. */
function outcome({
  reads,
  torn,
  sameTagOtherBody,
  unchangedAfter,
}: Record<'torn' | 'sameTagOtherBody' | 'unchangedAfter', string[]> & { reads: number }) {
  const failures = torn.length + sameTagOtherBody.length + unchangedAfter.length;
  return {
    reads: failures === 0 ? reads > 0 : reads,
    torn: torn.length,
    sameTagOtherBody: sameTagOtherBody.length,
    unchangedAfter: unchangedAfter.length,
    examples: [...torn, ...sameTagOtherBody, ...unchangedAfter].slice(0, 6),
  };
}

describe('readers during a clear and a batch', () => {
  it('see every entry cleared or none, and no answer tagged with the version before the clear', async () => {
    const alice = await system.auth('alice');
    // The list with every entry live, or with every entry cleared (tombstones listed only with `with_deleted`).
    const all = (deleted: boolean) => (r: Read) =>
      r.data.length === (deleted && !r.query.includes('with_deleted') ? 0 : ENTRIES) && r.data.every((item) => item.deleted === deleted);
    const summary = { reads: 0, torn: [] as string[], sameTagOtherBody: [] as string[], unchangedAfter: [] as string[] };
    for (let round = 0; round < ROUNDS; round++) {
      const seeded = await system.http
        .post('/api/history/v2/batch')
        .set('authorization', alice)
        .send({ data: items(round) });
      expect(seeded.status).toBe(204);
      const before = await Promise.all(QUERIES.map((query) => read(alice, query)));
      const { written, reads } = await readWhile(alice, () => system.http.delete('/api/history/v2').set('authorization', alice));
      expect(written.status).toBe(204);
      const during = [...before, ...reads];
      summary.reads += reads.length;
      summary.torn.push(...torn(during, [all(false), all(true)]).map(shown));
      // Every tag given before or during the clear, sent back after it: the cleared list, or a 304 only to a read that
      // was given the cleared list already (the tag of the version before the clear never).
      const after: Read[] = [];
      for (const each of during) {
        const again = await read(alice, each.query, each.etag);
        const now = again.status === 304 ? await read(alice, each.query) : again;
        after.push(now);
        if (!all(true)(now) || (again.status === 304 && now.text !== each.text))
          summary.unchangedAfter.push(`${each.query}: ${again.status}`);
      }
      summary.sameTagOtherBody.push(...sameTagOtherBody([...during, ...after]));
    }
    expect(outcome(summary)).toEqual({ reads: true, torn: 0, sameTagOtherBody: 0, unchangedAfter: 0, examples: [] });
  }, 120_000);

  it('see every entry of a batch or none of them', async () => {
    const summary = { reads: 0, torn: [] as string[], sameTagOtherBody: [] as string[] };
    for (let round = 0; round < ROUNDS; round++) {
      // A user per round: before the batch their history is empty.
      const user = await system.auth(`batch-${round}`);
      const none = (r: Read) => r.data.length === 0;
      const every = (r: Read) => r.data.length === ENTRIES && r.data.every((item) => !item.deleted);
      const { written, reads } = await readWhile(user, () =>
        system.http
          .post('/api/history/v2/batch')
          .set('authorization', user)
          .send({ data: items(round) }),
      );
      expect(written.status).toBe(204);
      summary.reads += reads.length;
      summary.torn.push(...torn(reads, [none, every]).map(shown));
      summary.sameTagOtherBody.push(...sameTagOtherBody(reads));
    }
    expect(outcome({ ...summary, unchangedAfter: [] })).toEqual({
      reads: true,
      torn: 0,
      sameTagOtherBody: 0,
      unchangedAfter: 0,
      examples: [],
    });
  }, 120_000);
});
