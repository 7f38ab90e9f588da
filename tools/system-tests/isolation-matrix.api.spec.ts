import { type AnyRoute, PUBLIC_ROUTES } from '@udp/contracts';
import type { TestSystem } from '@udp/test-system';
import { given, waitUntil } from '@udp/test-kit';
import { fillSlots, sampleBody } from './sample-bodies';
import { exportStreamId, historyStreamId, playlistsStream, preferenceStreamId, profileStreamId, startWholeSystem } from './whole-system';

/**
 * The isolation matrix (issue 9): user B tries every id that user A's data exposes (technical ids, business ids,
 * playlist and bookmark ids, preference keys and paths, the public id of a profile that is not public) on every
 * endpoint of history (both paths), playlists v2 and v3, preferences, profile and data exports, with every method.
 *
 * A leak is: an answer to B that carries anything of A's (every record of A holds a marker string that B never
 * sends; and while B has not yet written, no id of A that the request did not name), or any change to A's data
 * (A's view through the API and A's event streams are compared before and after). Any 5xx fails too. Reads run
 * first, then every write, then every read again. The user ids are the pair whose preference streams once collided.
 *
 * Its rows: every route of the contracts' tables (`ROUTE_ROWS`, derived: a new endpoint is tried with no row written
 * here), and probes the tables cannot state (`PROBES`: ids in query strings, every method on every id path).
 */
const A = 'u';
const B = 'u-YWI';

/** Strings only A's data holds; B never sends them, so none may appear in any answer to B. */
const A_MARKERS = [
  'A-secret-device',
  '4242.25',
  'A-secret-list',
  'A-secret-fav',
  'A-secret-volume',
  'A-secret-c',
  'A-secret-theme',
  'A-secret-first',
  'A-secret-display',
];
const A_DATE = 1_600_000_000_123;

/**
 * The kinds of ids A's data exposes. `any` is every id of every kind (a path slot that may hold anything).
 *
 * Export keys: A's finished export; its public address is a capability by design (anyone holding the key may
 * download until it expires), so only the owner-only addresses are tried.
 */
type IdKind = 'itemId' | 'historyId' | 'playlistId' | 'businessId' | 'bookmarkId' | 'key' | 'path' | 'publicUserId' | 'exportKey';
type ExposedIds = Record<IdKind, string[]>;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
const METHODS: Method[] = ['get', 'post', 'put', 'patch', 'delete'];

interface Row {
  /** Path (and query) with slots `{kind}` (ids of that kind) or `{any}` (every id). */
  path: string;
  methods?: Method[];
  /** Body for POST/PUT/PATCH, given the ids in the slots; default: one that satisfies most schemas, B's values only. */
  body?: (slot: Record<string, string>) => unknown;
  /** Kinds of ids the body takes besides the path's slots. */
  bodySlots?: IdKind[];
  /** The table's route this row was derived from. */
  route?: AnyRoute;
}

const B_BODY = {
  item_id: 'urn:B:x',
  last_playback_position: 7,
  device_id: 'B-device',
  name: 'B-name',
  media_id: 'urn:B:x',
  itemId: 'urn:B:x',
  payload: { b: 'B-value' },
  displayName: 'B-display',
  data: [{ item_id: 'urn:B:x' }],
};

/**
 * Routes of the tables the matrix does not send, each with its reason; any other route is tried (`ROUTE_ROWS`).
 */
const NOT_TRIED: Record<string, string> = {
  downloadPublicExport: 'its public address is a capability by design: anyone holding the key may download until it expires',
  eraseUserData: "B's own erasure refuses B until it is done, which would hide every later attempt (erasure has suites of its own)",
  getPersonalisationEndpoint: "served by the gateway's own routers, which the whole system here does not start (routes.api.spec.ts does)",
  streamChanges: "served by the gateway's own routers, which the whole system here does not start (routes.api.spec.ts does)",
  createChangesTicket: "served by the gateway's own routers, which the whole system here does not start (routes.api.spec.ts does)",
};

/** A path parameter's id kind, by its name, for routes with several (one parameter alone takes every id: `{any}`). */
const PARAM_KINDS: Record<string, IdKind> = {
  playlistId: 'playlistId',
  bookmarks_id: 'bookmarkId',
  bookmarkId: 'bookmarkId',
  playlistBusinessId: 'businessId',
  key: 'key',
  path: 'path',
};

/** Each route of the tables on its own method, its path parameters as slots, its body sampled from its schema. */
const ROUTE_ROWS: Row[] = PUBLIC_ROUTES.filter((route) => !(route.operationId in NOT_TRIED)).map((route) => {
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const path = route.path.replace(/\{(\w+)\}/g, (_m, name: string) => `{${params.length === 1 ? 'any' : (PARAM_KINDS[name] ?? 'any')}}`);
  const sample = sampleBody(route);
  return {
    route,
    path,
    methods: [route.method],
    ...(sample && { body: (slots: Record<string, string>) => fillSlots(sample.template, slots), bodySlots: sample.slots as IdKind[] }),
  };
});

/** What the tables cannot state: ids of A in query strings, and every method on every path that holds an id. */
const PROBES: Row[] = [
  // History, both paths.
  ...['/api/history/v2', '/api/history'].flatMap((base): Row[] => [
    { path: `${base}/{any}` },
    { path: `${base}/{historyId}/positions` },
    { path: `${base}?with_deleted=true&before=${A_DATE + 1}&before_item_id={itemId}`, methods: ['get'] },
    { path: `${base}/positions?return_missing=true&item_ids={itemId}`, methods: ['get'] },
    // A tombstone of A's item in B's history (the table's sample records one).
    {
      path: `${base}/batch`,
      methods: ['post'],
      body: ({ itemId }) => ({ data: [{ item_id: itemId, deleted: true }] }),
      bodySlots: ['itemId'],
    },
  ]),
  // Playlists v2: technical ids, bookmark ids.
  { path: '/api/playlist/v2/{any}' },
  { path: '/api/playlist/v2/{any}/bookmarks', body: ({ itemId }) => ({ media_id: itemId ?? 'urn:B:x' }) },
  { path: '/api/playlist/v2/{playlistId}/bookmarks/{bookmarkId}' },
  // Playlists v3: business ids, bookmark ids, item ids.
  { path: '/api/playlist/v3/{any}', body: () => ({ name: 'B-name' }) },
  { path: '/api/playlist/v3/{any}/bookmarks', body: () => [{ itemId: 'urn:B:x' }] },
  { path: '/api/playlist/v3/{businessId}/bookmarks/{bookmarkId}' },
  { path: '/api/playlist/v3/{businessId}/bookmarks?ids={bookmarkId}&mediaIds={itemId}', methods: ['get', 'delete'] },
  // Preferences: keys, paths in documents, JSONPath.
  { path: '/api/preference/{any}' },
  { path: '/api/preference/{key}/{path}', body: () => ({ payload: { b: 'B-value' } }) },
  { path: '/api/preference/{key}?jsonpath=%24..*', methods: ['get', 'delete'] },
  // Data exports: the owner-only address of A's export, and every id of A in the key slot.
  { path: '/api/data/export/{exportKey}' },
  { path: '/api/data/export/{any}' },
  // Profile: the public id of a profile that is not public.
  { path: '/api/profile/v3/public/{any}' },
  { path: '/api/profile/v3/{any}' },
];

let system: TestSystem;
beforeAll(async () => {
  system = await startWholeSystem();
});
afterAll(() => system.stop());

type Client = ReturnType<typeof clientOf>;
function clientOf(auth: string) {
  return (method: Method, path: string, body?: unknown) => {
    const req = system.http[method](path).set('authorization', auth);
    return body === undefined ? req : req.set('content-type', 'application/json').send(JSON.stringify(body));
  };
}

async function seedA(a: Client): Promise<void> {
  const ok = async (res: Promise<{ status: number; text: string }> | { status: number; text: string }) => {
    const answer = await res;
    if (answer.status >= 300) throw new Error(`seeding A failed: ${answer.status} ${answer.text}`);
  };
  await ok(
    a('post', '/api/history/v2/batch', {
      data: [
        { item_id: 'urn:A:1', date: A_DATE, device_id: 'A-secret-device', last_playback_position: 4242.25 },
        { item_id: 'urn:A:2', date: A_DATE - 1, device_id: 'A-secret-device', last_playback_position: 4242.25 },
        { item_id: 'urn:A:gone', date: A_DATE - 2, device_id: 'A-secret-device' },
      ],
    }),
  );
  await ok(a('delete', '/api/history/v2/urn%3AA%3Agone'));
  await ok(a('post', '/api/playlist/v2/new/bookmarks', { name: 'A-secret-list', media_id: 'urn:A:media1' }));
  await ok(a('post', '/api/playlist/v3/new/bookmarks', { businessId: 'a-fav', itemId: 'urn:A:media2', name: 'A-secret-fav' }));
  await ok(a('post', '/api/playlist/v3/a-fav/bookmarks', { itemId: 'urn:A:media3' }));
  await ok(a('post', '/api/playlist/v3/watch_later/bookmarks', { itemId: 'urn:A:wl' }));
  await ok(
    a('put', `/api/preference/${encodeURIComponent('ab>settings')}`, { player: { volume: 'A-secret-volume' }, 'a b': { c: 'A-secret-c' } }),
  );
  await ok(a('put', '/api/preference/settings', { theme: 'A-secret-theme' }));
  await ok(a('put', `/api/preference/${encodeURIComponent('app/ios')}`, { theme: 'A-secret-theme' }));
  await ok(a('put', '/api/profile/v3', { displayName: 'A-secret-display', firstName: 'A-secret-first', public: false }));
  await ok(a('post', '/api/data/export', { fileName: 'a-export' }));
  // Seeded once it is built, so the "before" view of A does not change on its own.
  await waitUntil(
    async () => ((await a('get', '/api/data/export')).body as Array<{ status: string }>)[0]?.status === 'ready',
    20_000,
    'A export ready',
  );
}

/** Everything A can see of its own data, through the API. */
async function viewOfA(a: Client) {
  const body = async (path: string) => {
    const res = await a('get', path);
    return { status: res.status, body: res.body as unknown };
  };
  const v2 = (await a('get', '/api/playlist/v2')).body as { playlists: Array<{ id: string }> };
  const v3 = (await a('get', '/api/playlist/v3')).body as { playlists: Array<{ businessId: string }> };
  const keys = (await a('get', '/api/preference')).body as string[];
  return {
    history: await body('/api/history/v2?with_deleted=true&limit=1000'),
    historyV1: await body('/api/history?with_deleted=true&limit=1000'),
    positions: await body('/api/history/v2/positions?return_missing=true'),
    v2: await Promise.all(v2.playlists.map((p) => body(`/api/playlist/v2/${encodeURIComponent(p.id)}/bookmarks`))),
    v3: await Promise.all(v3.playlists.map((p) => body(`/api/playlist/v3/${encodeURIComponent(p.businessId)}`))),
    preferences: await Promise.all(keys.map(async (key) => ({ key, ...(await body(`/api/preference/${encodeURIComponent(key)}`)) }))),
    profile: await body('/api/profile/v3'),
    exports: await body('/api/data/export'),
  };
}

/** The ids A's data exposes, read from A's own answers (nothing assumed). */
function exposedIds(view: Awaited<ReturnType<typeof viewOfA>>): ExposedIds {
  const history = (view.history.body as { data: Array<{ id: number; item_id: string }> }).data;
  const v2 = view.v2.map((p) => p.body as { id: string; bookmarks: Array<{ id: number; media_id: string }> });
  const v3 = view.v3.map((p) => p.body as { id: string; businessId: string; bookmarks: Array<{ id: number; itemId: string }> });
  const paths = new Set<string>();
  const walk = (value: unknown, prefix: string[]) => {
    if (typeof value !== 'object' || value === null) return;
    for (const [k, v] of Object.entries(value)) {
      paths.add([...prefix, k].join('/'));
      walk(v, [...prefix, k]);
    }
  };
  for (const p of view.preferences) walk(p.body, []);
  const unique = (values: Array<string | number>) => [...new Set(values.map(String))];
  return {
    itemId: unique([...history.map((h) => h.item_id), ...v3.flatMap((p) => p.bookmarks.map((b) => b.itemId))]),
    historyId: unique(history.map((h) => h.id)),
    playlistId: unique([...v2.map((p) => p.id), ...v3.map((p) => p.id)]),
    businessId: unique(v3.map((p) => p.businessId)),
    bookmarkId: unique([...v2.flatMap((p) => p.bookmarks.map((b) => b.id)), ...v3.flatMap((p) => p.bookmarks.map((b) => b.id))]),
    key: unique(view.preferences.map((p) => p.key)),
    path: [...paths],
    publicUserId: [(view.profile.body as { publicUserId: string }).publicUserId],
    exportKey: unique((view.exports.body as Array<{ key: string }>).map((e) => e.key)),
  };
}

interface Attempt {
  method: Method;
  path: string;
  body?: unknown;
  /** The row's route, for a derived row. */
  route?: AnyRoute;
}

/** Every (method, path, body) of a row, for every combination of ids in its slots. */
function attemptsOf(row: Row, ids: ExposedIds): Attempt[] {
  const any = [...new Set(Object.values(ids).flat())];
  const slots = [...[...row.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]), ...(row.bodySlots ?? [])];
  let bindings: Array<Record<string, string>> = [{}];
  for (const slot of slots) {
    const values = slot === 'any' ? any : ids[slot as IdKind];
    bindings = bindings.flatMap((b) => values.map((v) => ({ ...b, [slot]: v })));
  }
  const encode = (slot: string, value: string) =>
    slot === 'path' ? value.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(value);
  return bindings.flatMap((binding) => {
    const path = row.path.replace(/\{(\w+)\}/g, (_m, slot: string) => encode(slot, binding[slot]));
    const named = { ...binding, ...(binding.any !== undefined && { itemId: binding.itemId ?? binding.any }) };
    return (row.methods ?? METHODS).map((method) => ({
      method,
      path,
      ...(row.route && { route: row.route }),
      ...(method !== 'get' && method !== 'delete' && { body: row.body ? row.body(named) : B_BODY }),
    }));
  });
}

async function streamRevisionsOfA(keys: string[]): Promise<number[]> {
  const [history, playlists, preference, profile, , exports] = system.deps.map((d) => d.store);
  return Promise.all(
    [
      history.readStream(historyStreamId(A)),
      playlists.readStream(playlistsStream(A).id),
      ...keys.map((key) => preference.readStream(preferenceStreamId(A, key))),
      profile.readStream(profileStreamId(A)),
      exports.readStream(exportStreamId(A)),
    ].map(async (read) => (await read).revision),
  );
}

/** An answer from no handler: the gateway's or a service's 404 "no route for ...", or 405. */
const unrouted = (res: { status: number; body?: { detail?: unknown } }) =>
  res.status === 405 || (res.status === 404 && String(res.body?.detail).startsWith('no route for'));

/**
 * B tries every attempt in turn: what each answer shows of A (markers always; ids of A it did not send while B has
 * written nothing yet), and any 5xx. The matrix is one action under test: its leaks are gathered, not asserted one by one.
 * Also which routes of the tables a handler answered for (a derived row that reaches none tries nothing).
 */
async function tryEverything(b: Client, attempts: Attempt[], readsFirst: number, idsOnlyA: string[]) {
  const leaks: string[] = [];
  const reached = new Set<AnyRoute>();
  for (const [n, attempt] of attempts.entries()) {
    const res = await b(attempt.method, attempt.path, attempt.body);
    if (attempt.route && !unrouted(res)) reached.add(attempt.route);
    const sent = `${decodeURIComponent(attempt.path)} ${JSON.stringify(attempt.body ?? null)}`;
    const beforeAnyWrite = n < readsFirst;
    const found = [
      ...A_MARKERS.filter((marker) => res.text.includes(marker)),
      ...(beforeAnyWrite ? idsOnlyA.filter((id) => res.text.includes(id) && !sent.includes(id)) : []),
    ];
    if (found.length > 0) leaks.push(`${attempt.method.toUpperCase()} ${attempt.path} -> ${res.status} shows ${found.join(', ')}`);
    if (res.status >= 500) leaks.push(`${attempt.method.toUpperCase()} ${attempt.path} -> ${res.status}`);
  }
  return { leaks, reached };
}

it('user B gets nothing of user A and changes nothing of it, whatever id of A it tries, with every method', async () => {
  const a = clientOf(await system.auth(A));
  const b = clientOf(await system.auth(B));
  await given(async () => {
    await seedA(a);
    // B has data of its own, so that "B's own" answers are not trivially empty.
    await b('post', '/api/history/v2', { item_id: 'urn:B:own', last_playback_position: 3 });
    await b('post', '/api/playlist/v3/new/bookmarks', { businessId: 'b-list', itemId: 'urn:B:own', name: 'B-name' });

    const before = await viewOfA(a);
    const ids = exposedIds(before);
    for (const [kind, values] of Object.entries(ids)) expect({ kind, found: values.length > 0 }).toEqual({ kind, found: true });
    const revisionsBefore = await streamRevisionsOfA(ids.key);
    expect(revisionsBefore.every((r) => r >= 0)).toBe(true);

    // A probe that repeats a route's attempt is sent once, as the route's.
    const unique = new Map<string, Attempt>();
    for (const attempt of [...ROUTE_ROWS, ...PROBES].flatMap((row) => attemptsOf(row, ids))) {
      const key = `${attempt.method} ${attempt.path} ${JSON.stringify(attempt.body ?? null)}`;
      if (!unique.has(key)) unique.set(key, attempt);
    }
    const all = [...unique.values()];
    const reads = all.filter((a) => a.method === 'get');
    // Writes that build on what is stored (merges) before those that replace it, so a shared stream would show.
    const writes = (['post', 'patch', 'put', 'delete'] as Method[]).flatMap((method) => all.filter((a) => a.method === method));
    const attempts = [...reads, ...writes, ...reads];
    // Ids only A's data holds (numbers and `watch_later` are everyone's), looked for while B has written nothing yet.
    const idsOnlyA = [...ids.itemId, ...ids.playlistId, ...ids.businessId, ...ids.publicUserId].filter((id) => id !== 'watch_later');
    return { before, ids, revisionsBefore, attempts, reads, idsOnlyA };
  })
    .when(({ attempts, reads, idsOnlyA }) => tryEverything(b, attempts, reads.length, idsOnlyA))
    .then(async ({ leaks, reached }, { before, ids, revisionsBefore, attempts }) => {
      const after = await viewOfA(a);
      const revisionsAfter = await streamRevisionsOfA(ids.key);
      const idCount = new Set(Object.values(ids).flat()).size;
      process.stdout.write(
        `isolation matrix: ${attempts.length} attempts by user B on ${idCount} ids of user A (${ROUTE_ROWS.length} routes of the tables, ${PROBES.length} probes, ${METHODS.length} methods): ${leaks.length} leaks\n`,
      );
      expect(leaks).toEqual([]);
      // Every route of the tables was tried and answered by its handler, or is set apart with a reason.
      const notReached = ROUTE_ROWS.filter((row) => !reached.has(row.route!)).map(
        (row) => `${row.route!.method.toUpperCase()} ${row.route!.path}`,
      );
      expect(notReached).toEqual([]);
      expect(Object.keys(NOT_TRIED).filter((id) => !PUBLIC_ROUTES.some((route) => route.operationId === id))).toEqual([]);
      expect(after).toEqual(before);
      expect(revisionsAfter).toEqual(revisionsBefore);
      expect(attempts.length).toBeGreaterThan(1000);
    });
}, 300_000);
