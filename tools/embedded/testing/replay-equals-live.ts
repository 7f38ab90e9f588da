import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { Express } from 'express';
import request, { type Response, type Test } from 'supertest';
import { IDENTITY_HEADER, InternalIdentity } from '@udp/auth';
import { InProcessBus } from '@udp/bus';
import { erasureEvents } from '@udp/contracts';
import { ERASURES_DONE } from '@udp/eventsourcing';
import {
  MemoryEventStore,
  MemorySnapshotStore,
  SqliteEventStore,
  SqliteSnapshotStore,
  type EventStore,
  type SnapshotStore,
} from '@udp/eventstore';
import { MemoryReadModelStore, SqliteReadModelStore, type Document, type ReadModelStore } from '@udp/readmodel';
import type { ServiceApp, ServiceDeps, SnapshotDeps } from '@udp/runtime';
import { createLogger } from '@udp/telemetry';

/**
 * "Replay equals live" (the property every service is held to): random interleavings of a service's writes, erasures,
 * restarts and kills, after which the read models rebuilt from the event log equal the live ones document for
 * document, and nothing of an erased user written before the erasure is served. One harness; each service's spec
 * gives its operations and what it serves (`ServiceUnderReplay`).
 *
 * An interleaving is one seed: its users, operations, concurrent groups and adapters (memory, or the embedded SQLite
 * files in a data directory of its own) all follow from it, so a failure is replayed with `REPLAY_ONLY=<seed>`.
 */

// ---- what a service spec gives ---------------------------------------------------------------------------------

/** A request as one user: the identity header the gateway would sign, straight to the service's own server. */
export interface Client {
  get(path: string): Test;
  post(path: string, body: unknown): Test;
  put(path: string, body: unknown): Test;
  delete(path: string): Test;
}

/** A piece of a user's data, as a path of names (`['p1', 'urn:i2']`): a write to a path may replace what is under it. */
export type DataKey = string[];

export interface Operation {
  /** What it does, for the op sequence of a failure (`POST /api/history/v2 urn:i1`). */
  name: string;
  send(client: Client): Test;
  /** Statuses other than 2xx that are answers and not failures here (a 404 for a delete of what is not there). */
  alsoAccepted?: number[];
  /** What a success leaves, each under its key: a marker is unique text that the user's data then shows. */
  writes?: Array<{ marker: string; key: DataKey }>;
  /** What a success may remove or replace besides its writes' keys (`[]`: all of the user's data). */
  removes?: DataKey[];
}

export interface OperationContext {
  random: Random;
  /** Markers are unique in the interleaving (`mk<n>k`: no marker is part of another, and nothing else contains "mk"). */
  marker(): string;
  /** The writes of the user acknowledged so far, newest last (e.g. a bookmark to remove). */
  written: Array<{ marker: string; key: DataKey }>;
  /** What the service takes as now, in ms: advances with every request sent (dates sent by clients use it too). */
  now(): number;
}

export interface ServiceUnderReplay {
  /** The participant's name in erasures, and its folder under DATA_DIR. */
  service: string;
  create(deps: ServiceDeps & SnapshotDeps): Promise<ServiceApp>;
  /** One operation of `user`, drawn from the service's mix. */
  operation(user: string, context: OperationContext): Operation;
  /** Everything the API serves the user (lists and each thing listed), searched for markers. */
  served(client: Client): Promise<unknown>;
  /**
   * Read-model collections that are not derived from the event log by design, with the reason; left out of the
   * comparison. (Every service has one: the erasure participant's record of erasures done, `_erasures_done`, which
   * says which requests were handled and comes from the bus, not from events.)
   */
  notFromTheLog?: string[];
  /**
   * Fields of a collection's documents that are the projection's own bookkeeping rather than data of the log (e.g. a
   * write counter, which counts the updates a live projection made and a rebuild makes fewer of), by collection; left
   * out of the comparison, each named with its reason where the service gives it.
   */
  bookkeeping?: Record<string, string[]>;
  /** Documents that hold nothing but bookkeeping, so that having one is the same as having none (by collection). */
  sameAsNone?: Record<string, (doc: Record<string, unknown>) => boolean>;
}

/** A service's part without how it is built: shared by the suites, which alone may import the apps to build them. */
export type ServiceMix = Omit<ServiceUnderReplay, 'create'>;

// ---- the seeded random source ----------------------------------------------------------------------------------

/** mulberry32: a tiny seeded PRNG, enough to draw an interleaving again from its seed. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** The seed of the `index`th interleaving of a run from `base`. */
export const interleavingSeed = (base: number, index: number) =>
  new Random((base ^ Math.imul(index + 1, 0x9e3779b9)) >>> 0).int(1, 2 ** 31 - 1);

// ---- running one instance of the service -----------------------------------------------------------------------

const T0 = 1_700_000_000_000;
// Connections kept between a user's requests, as a client's are (each instance's server closes them when it goes).
const keepAlive = new Agent({ keepAlive: true });
const logger = createLogger('replay-equals-live', process.env.TEST_LOG_LEVEL ?? 'silent');
const ERASURE_PENDING = /erasure-pending$/;

/** Where an interleaving's data lives across restarts: the same objects (memory) or the same files (SQLite). */
interface Files {
  mode: 'memory' | 'sqlite';
  dir?: string;
  /** Memory mode: the "files" are these objects, kept across restarts. */
  memory?: { store: EventStore; readModels: MemoryReadModelStore; snapshots: MemorySnapshotStore };
}

/**
 * The memory store, but its stream deletions take a few milliseconds, as on SQLite (its writer thread's round trip
 * and fsync): in memory an erasure's steps would run in one turn of the event loop, and no request could ever land
 * between the deletion of the user's streams and that of their documents, which is the race to look at.
 */
function slowDeletions(store: MemoryEventStore, random: Random): EventStore {
  const pause = () => new Promise((resolve) => setTimeout(resolve, random.int(0, 3)));
  return new Proxy(store, {
    get(target, property) {
      if (property === 'deleteStream')
        return async (streamId: string) => {
          await pause();
          await target.deleteStream(streamId);
          await pause();
        };
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A snapshot store whose writes stop when the process is killed: a SIGKILL saves nothing at stop. */
class KillableSnapshots implements SnapshotStore {
  killed = false;
  constructor(private readonly inner: SnapshotStore) {}
  read(streamId: string) {
    return this.inner.read(streamId);
  }
  async write(streamId: string, snapshot: Parameters<SnapshotStore['write']>[1]) {
    if (!this.killed) await this.inner.write(streamId, snapshot);
  }
  async delete(streamId: string) {
    if (!this.killed) await this.inner.delete(streamId);
  }
  close() {
    return this.inner.close();
  }
}

interface Instance {
  app: ServiceApp;
  server: Server;
  url: string;
  store: EventStore;
  readModels: ReadModelStore;
  snapshots: KillableSnapshots;
}

async function listenOnLoopback(app: Express): Promise<{ server: Server; url: string }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

/** Nothing is in flight when an instance goes (the harness awaits every request first): its connections are idle. */
async function closeNow(server: Server): Promise<void> {
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeAllConnections();
  await closed;
}

/** Opens the adapters on the interleaving's files as the embedded wiring does (libs/runtime/src/adapters.ts). */
async function openFiles(files: Files, service: string): Promise<Pick<Instance, 'store' | 'readModels'> & { snapshots: SnapshotStore }> {
  if (files.memory) return files.memory;
  const dir = join(files.dir!, service);
  const store = new SqliteEventStore(join(dir, 'events.sqlite'), { service });
  const readModels = await SqliteReadModelStore.open({
    file: join(dir, 'read-models.sqlite'),
    head: () => store.highestPosition(),
    deferIndexes: true,
  });
  return { store, readModels, snapshots: new SqliteSnapshotStore(join(dir, 'snapshots.sqlite')) };
}

/**
 * An answer of the service rather than a failure: a success, what the operation names (a 404 for a delete of what is
 * not there, history's 429 for a concurrent update), or the erasure boundary's 409 `erasure-pending` (a request of a
 * user being erased is refused until the erasure ends).
 */
export function isAnswer(operation: Operation, res: Pick<Response, 'status' | 'body'>): boolean {
  return (
    (res.status >= 200 && res.status < 300) ||
    (operation.alsoAccepted ?? []).includes(res.status) ||
    (res.status === 409 && ERASURE_PENDING.test(String((res.body as { type?: unknown } | undefined)?.type ?? '')))
  );
}

// ---- one interleaving ------------------------------------------------------------------------------------------

/**
 * One operation as it went: when it was sent and answered on the interleaving's logical clock, and its answer (0: none
 * came, the process was killed with it in flight: it may or may not have been applied).
 */
export interface Done {
  user: string;
  operation: Operation;
  sentAt: number;
  answeredAt: number;
  status: number;
}

export interface Erasure {
  user: string;
  requestedAt: number;
  confirmedAt: number;
}

export interface InterleavingResult {
  seed: number;
  mode: 'memory' | 'sqlite';
  /** The steps taken, one line each (printed with a failure). */
  steps: string[];
  problems: string[];
  /** How many times each answer came (409 included: the erasure boundary refusing a write that raced an erasure). */
  statuses: Record<string, number>;
}

/** Draws and runs the interleaving of `seed`, then checks it: the problems found (none: it passed). */
export async function runInterleaving(
  subject: ServiceUnderReplay,
  seed: number,
  options: { sqliteShare: number },
): Promise<InterleavingResult> {
  const random = new Random(seed);
  const mode = random.chance(options.sqliteShare) ? 'sqlite' : 'memory';
  const files: Files =
    mode === 'sqlite'
      ? { mode, dir: mkdtempSync(join(tmpdir(), 'udp-replay-')) }
      : // The pauses draw from their own source: how many deletions an erasure makes depends on timing.
        {
          mode,
          memory: {
            store: slowDeletions(new MemoryEventStore(), new Random(seed ^ 0x5bd1e995)),
            readModels: new MemoryReadModelStore(),
            snapshots: new MemorySnapshotStore(),
          },
        };
  const identity = new InternalIdentity(randomBytes(32).toString('base64url'));
  // The embedded bus lives in the process; here it outlives restarts so that an erasure's confirmation is awaited
  // on one bus (each instance's participant subscribes to it anew: its group goes on from its committed offset).
  const bus = new InProcessBus(5);
  let tick = 0;
  const clock = () => ++tick;
  const now = () => T0 + tick * 1000;
  const steps: string[] = [];
  const problems: string[] = [];
  const done: Done[] = [];
  const erasures: Erasure[] = [];
  const users = Array.from({ length: random.int(2, 3) }, (_, i) => `u${i + 1}`);
  let markers = 0;

  const start = async (): Promise<Instance> => {
    const opened = await openFiles(files, subject.service);
    const snapshots = new KillableSnapshots(opened.snapshots);
    const app = await subject.create({
      store: opened.store,
      readModels: opened.readModels,
      bus,
      identity,
      logger,
      now,
      // Folded states saved every 5 events (not 1,000): restarts and kills then start writers from snapshots too.
      snapshots,
      snapshotEvery: 5,
    });
    const { server, url } = await listenOnLoopback(app.app);
    return { app, server, url, store: opened.store, readModels: opened.readModels, snapshots };
  };
  const closeFiles = async (instance: Instance) => {
    if (files.memory) return;
    await instance.store.close();
    await instance.readModels.close();
    await instance.snapshots.close();
  };
  /** A graceful stop (SIGTERM): the service's own stop, then its files closed. */
  const stop = async (instance: Instance) => {
    await closeNow(instance.server);
    await instance.app.stop();
    await closeFiles(instance);
  };
  /**
   * kill -9, in this process: what the process had not written is lost. The read models' open batch (up to 50 ms of
   * rows and their checkpoints, libs/readmodel/src/sqlite.ts) is rolled back by closing the connection under it, and
   * no snapshot is saved; then the instance is taken apart without flushing anything, so that the next one opens the
   * files as a process started after a crash would. Acknowledged events are on disk already (fsync before the answer).
   * Memory read models have no unwritten batch: there a kill differs from a stop only by the snapshots left unsaved.
   */
  const kill = async (instance: Instance) => {
    instance.snapshots.killed = true;
    if (instance.readModels instanceof SqliteReadModelStore) {
      const crashed = instance.readModels;
      crashed.database.close();
      // Its log-copying thread goes with the process (private: a rename shows here, not as a leak).
      const thread = (crashed as unknown as { checkpointer?: Worker }).checkpointer;
      if (!thread) throw new Error('SqliteReadModelStore has no checkpointer thread to stop: update the kill of replay-equals-live.ts');
      await thread.terminate();
    }
    await closeNow(instance.server);
    await instance.app.stop();
    if (!files.memory) {
      await instance.store.close();
      await instance.snapshots.close();
    }
  };

  let live = await start();
  const client = (user: string): Client => {
    const as = (test: Test) =>
      test
        .agent(keepAlive)
        .set(IDENTITY_HEADER, identity.sign({ userId: user }))
        .timeout(20_000);
    const json = (test: Test, body: unknown) => as(test).set('content-type', 'application/json').send(JSON.stringify(body));
    return {
      get: (path) => as(request(live.url).get(path)),
      post: (path, body) => json(request(live.url).post(path), body),
      put: (path, body) => json(request(live.url).put(path), body),
      delete: (path) => as(request(live.url).delete(path)),
    };
  };
  const written = (user: string) =>
    done.filter((d) => d.user === user && d.status >= 200 && d.status < 300).flatMap((d) => d.operation.writes ?? []);

  const runOperation = async (user: string, operation: Operation): Promise<void> => {
    const sentAt = clock();
    const res = await operation.send(client(user)).catch((error: unknown) => ({ status: 0, body: String(error), type: '' }) as Response);
    const answeredAt = clock();
    done.push({ user, operation, sentAt, answeredAt, status: res.status });
    steps.push(`  ${user} ${operation.name} -> ${res.status}`);
    if (!isAnswer(operation, res)) problems.push(`${user} ${operation.name} answered ${res.status}: ${JSON.stringify(res.body)}`);
  };
  const draw = (user: string): Operation =>
    subject.operation(user, { random, marker: () => `mk${++markers}k`, written: written(user), now });

  /** As the coordinator asks (`userdata.erasure.requested`), resolved once the service confirmed on the bus. */
  const erase = async (user: string): Promise<void> => {
    const erasureId = randomUUID();
    let confirm!: () => void;
    const confirmed = new Promise<void>((resolve) => (confirm = resolve));
    const consumer = await bus.subscribe(erasureEvents.ERASURE_TOPICS.confirmed, `replay-${erasureId}`, async (m) => {
      if (erasureEvents.ErasureConfirmedMessage.parse(m.value).erasureId === erasureId) confirm();
    });
    const requestedAt = clock();
    const request: erasureEvents.ErasureRequestedMessage = { erasureId, userId: user, requestedAt: now() };
    await bus.publish(erasureEvents.ERASURE_TOPICS.requested, [{ key: user, value: request }]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), 15_000)));
    const late = await Promise.race([confirmed.then(() => false), timedOut]);
    clearTimeout(timer);
    await consumer.stop();
    steps.push(`  erase ${user}${late ? ' -> NOT CONFIRMED within 15 s' : ''}`);
    if (late) problems.push(`the erasure of ${user} was not confirmed within 15 s`);
    else erasures.push({ user, requestedAt, confirmedAt: clock() });
  };

  try {
    // 8 to 24 operations (16 on average): a request costs 2 ms here, and most races need only a few of them.
    const length = random.int(8, 24);
    for (let operations = 0; operations < length && problems.length === 0;) {
      const r = random.next();
      if (r < 0.06) {
        steps.push('restart');
        await stop(live);
        live = await start();
      } else if (r < 0.1) {
        steps.push('kill -9');
        await kill(live);
        live = await start();
      } else if (r < 0.22) {
        // An erasure, often racing a write of the same user (the suspected case) and others' requests.
        const user = random.pick(users);
        const racing: Array<[string, Operation]> = [];
        if (random.chance(0.7)) racing.push([user, draw(user)]);
        for (let i = random.int(0, 1); i > 0; i--) {
          const other = random.pick(users);
          racing.push([other, draw(other)]);
        }
        // Each sent 0-5 ms after the request: an erasure's steps (streams deleted, projectors caught up, documents
        // deleted) take a few milliseconds, and a write that lands between them is the case to catch.
        const delays = racing.map(() => random.int(0, 5));
        steps.push(`together (erasure of ${user}; the others sent ${delays.join(', ')} ms after it):`);
        const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
        await Promise.all([erase(user), ...racing.map(([u, op], i) => after(delays[i]).then(() => runOperation(u, op)))]);
        operations += 1 + racing.length;
      } else if (r < 0.45) {
        const group = Array.from({ length: random.int(2, 4) }, () => random.pick(users)).map((u) => [u, draw(u)] as const);
        steps.push('together:');
        await Promise.all(group.map(([u, op]) => runOperation(u, op)));
        operations += group.length;
      } else {
        const user = random.pick(users);
        await runOperation(user, draw(user));
        operations++;
      }
    }
    if (problems.length === 0) {
      problems.push(...(await rebuildDifferences(subject, live.store, live.readModels, files.mode, now)));
      for (const user of users) problems.push(...(await servedProblems(subject, client(user), user, done, erasures)));
    }
  } catch (error) {
    problems.push(`failed: ${(error as Error).stack ?? String(error)}`);
  } finally {
    await stop(live).catch((error: unknown) => problems.push(`stop failed: ${String(error)}`));
    await bus.close();
    if (files.dir) rmSync(files.dir, { recursive: true, force: true });
  }
  const statuses: Record<string, number> = {};
  for (const d of done) statuses[d.status] = (statuses[d.status] ?? 0) + 1;
  return { seed, mode, steps, problems, statuses };
}

// ---- the checks ------------------------------------------------------------------------------------------------

/** Every collection's documents, by collection name, sorted by id (JSON's types: as a reader gets them). */
export async function documentsOf(
  readModels: ReadModelStore,
  ignored: Set<string>,
  subject: Pick<ServiceUnderReplay, 'bookkeeping' | 'sameAsNone'>,
): Promise<Map<string, Document[]>> {
  const { bookkeeping = {}, sameAsNone = {} } = subject;
  const names: string[] =
    readModels instanceof SqliteReadModelStore
      ? (
          readModels.database
            .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rm\\_%' ESCAPE '\\'`)
            .pluck()
            .all() as string[]
        ).map((table) => table.slice(3))
      : [...(readModels as MemoryReadModelStore).image().collections.keys()];
  const all = new Map<string, Document[]>();
  for (const name of names) {
    if (ignored.has(name)) continue;
    const read: Document[] = JSON.parse(JSON.stringify(await readModels.collection(name).find({})));
    const docs = read.filter((doc) => !sameAsNone[name]?.(doc as unknown as Record<string, unknown>));
    for (const doc of docs) for (const field of bookkeeping[name] ?? []) delete (doc as unknown as Record<string, unknown>)[field];
    // A collection with no documents is the same as none (a service may open one before writing to it).
    if (docs.length > 0)
      all.set(
        name,
        docs.sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0)),
      );
  }
  return all;
}

/** A document's JSON with every object's keys in order: the order of a document's fields means nothing (SQLite keeps those in columns apart). */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

/** The first differences between two sets of collections, one line each. */
export function differences(live: Map<string, Document[]>, rebuilt: Map<string, Document[]>): string[] {
  const found: string[] = [];
  for (const name of [...new Set([...live.keys(), ...rebuilt.keys()])].sort()) {
    const a = new Map((live.get(name) ?? []).map((d) => [d._id, canonicalJson(d)]));
    const b = new Map((rebuilt.get(name) ?? []).map((d) => [d._id, canonicalJson(d)]));
    for (const id of new Set([...a.keys(), ...b.keys()])) {
      if (a.get(id) !== b.get(id)) found.push(`${name}/${id}: live ${a.get(id) ?? '(none)'} != rebuilt ${b.get(id) ?? '(none)'}`);
    }
  }
  return found;
}

/**
 * The live read models against ones rebuilt from the same log: the service started on the event store with fresh
 * memory read models replays everything, as the embedded mode does whenever it has no usable saved copy. What
 * asynchronous projectors keep (history's trending) may still be on its way: compared again for up to 0.5 s.
 */
export async function rebuildDifferences(
  subject: ServiceUnderReplay,
  store: EventStore,
  live: ReadModelStore,
  mode: string,
  now: () => number,
): Promise<string[]> {
  const ignored = new Set([ERASURES_DONE, ...(subject.notFromTheLog ?? [])]);
  const rebuiltModels = new MemoryReadModelStore();
  // Its own bus: the rebuilt instance must not take part in anything (erasure requests) of the live one.
  const quietBus = new InProcessBus(5);
  const identity = new InternalIdentity(randomBytes(32).toString('base64url'));
  const rebuilt = await subject.create({ store, readModels: rebuiltModels, bus: quietBus, identity, logger, now });
  try {
    const expected = await documentsOf(rebuiltModels, ignored, subject);
    let found: string[] = [];
    for (const deadline = Date.now() + 500; ;) {
      found = differences(await documentsOf(live, ignored, subject), expected);
      if (found.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return found.slice(0, 8).map((line) => `read model differs from its rebuild (${mode}): ${line}`);
  } finally {
    await rebuilt.stop();
    await quietBus.close();
  }
}

/**
 * What the API serves a user, against what each write of theirs was told:
 * - a write acknowledged before an erasure of the user was requested is never served afterwards (its marker is gone);
 * - a write refused (any answer but 2xx) left nothing;
 * - a write sent after the user's last erasure was confirmed, and acknowledged, is served, unless a later (or
 *   concurrent) acknowledged request of the same user may have replaced or removed it.
 */
export async function servedProblems(
  subject: ServiceUnderReplay,
  client: Client,
  user: string,
  done: Done[],
  erasures: Erasure[],
): Promise<string[]> {
  const text = JSON.stringify(await subject.served(client));
  const own = done.filter((d) => d.user === user);
  const succeeded = (d: Done) => d.status >= 200 && d.status < 300;
  const mayHaveApplied = (d: Done) => succeeded(d) || d.status === 0;
  const mine = erasures.filter((e) => e.user === user);
  const lastConfirmed = Math.max(0, ...mine.map((e) => e.confirmedAt));
  const problems: string[] = [];
  for (const d of own) {
    for (const write of d.operation.writes ?? []) {
      const shown = text.includes(write.marker);
      if (!mayHaveApplied(d) && shown) problems.push(`${user} ${d.operation.name} was refused (${d.status}) yet ${write.marker} is served`);
      const erasedAfter = mine.find((e) => mayHaveApplied(d) && d.answeredAt < e.requestedAt);
      if (erasedAfter && shown)
        problems.push(`${user} ${d.operation.name}: ${write.marker}, written before an erasure, is served after it`);
      const required = succeeded(d) && d.sentAt > lastConfirmed && !mayBeReplaced(d, write.key, own);
      if (required && !shown) problems.push(`${user} ${d.operation.name}: ${write.marker}, acknowledged after the erasure, is not served`);
    }
  }
  return problems;
}

const overlaps = (a: DataKey, b: DataKey) => a.slice(0, Math.min(a.length, b.length)).every((part, i) => part === b[i]);

/**
 * Another request of the user that may have been applied (acknowledged, or cut off by a kill), ended after `d` was sent
 * and touches `key`, may have come after it.
 */
function mayBeReplaced(d: Done, key: DataKey, own: Done[]): boolean {
  return own.some(
    (other) =>
      other !== d &&
      ((other.status >= 200 && other.status < 300) || other.status === 0) &&
      other.answeredAt > d.sentAt &&
      [...(other.operation.writes ?? []).map((w) => w.key), ...(other.operation.removes ?? [])].some((k) => overlaps(k, key)),
  );
}

// ---- a run of many ---------------------------------------------------------------------------------------------

export interface RunSettings {
  seed: number;
  interleavings: number;
  sqliteShare: number;
}

/** The run's settings: a fixed seed by default; REPLAY_SEED=random (or a number), REPLAY_INTERLEAVINGS, REPLAY_SQLITE_SHARE. */
export function runSettings(defaults: { seed: number; interleavings: number }): RunSettings {
  const seedText = process.env.REPLAY_SEED;
  const seed = seedText === 'random' ? randomBytes(4).readUInt32BE() >>> 1 : seedText ? Number(seedText) : defaults.seed;
  return {
    seed,
    interleavings: Number(process.env.REPLAY_INTERLEAVINGS ?? defaults.interleavings),
    sqliteShare: Number(process.env.REPLAY_SQLITE_SHARE ?? 0.05),
  };
}

/**
 * Runs the interleavings of a run (or only `REPLAY_ONLY=<seed>`, the one a failure named) and answers the failed ones,
 * each with its seed, its steps and its problems; at most `maxFailures` are gathered (each can cost seconds).
 */
export async function runInterleavings(subject: ServiceUnderReplay, settings: RunSettings, maxFailures = 5): Promise<string[]> {
  const only = process.env.REPLAY_ONLY ? [Number(process.env.REPLAY_ONLY)] : undefined;
  const seeds = only ?? Array.from({ length: settings.interleavings }, (_, i) => interleavingSeed(settings.seed, i));
  const started = performance.now();
  const failures: string[] = [];
  const modes = { memory: 0, sqlite: 0 };
  const statuses: Record<string, number> = {};
  for (const seed of seeds) {
    const result = await runInterleaving(subject, seed, settings);
    modes[result.mode]++;
    for (const [status, count] of Object.entries(result.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
    if (only) process.stderr.write(`${subject.service} interleaving ${seed} (${result.mode}):\n${result.steps.join('\n')}\n`);
    if (result.problems.length > 0) {
      failures.push(
        `interleaving ${seed} (${result.mode}; REPLAY_ONLY=${seed} to run it alone):\n${result.steps.join('\n')}\n  problems:\n    ${result.problems.join('\n    ')}`,
      );
      if (failures.length >= maxFailures) break;
    }
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `${subject.service}: ${only ? `interleaving ${only[0]}` : `${seeds.length} interleavings from seed ${settings.seed}`} (${modes.memory} memory, ${modes.sqlite} SQLite) in ${seconds} s, ${failures.length} failed; answers ${JSON.stringify(statuses)}\n`,
  );
  return failures;
}

/** The seed CI runs with: a failure there is a failure of this seed, replayed as such. */
export const FIXED_SEED = 20_261_201;

/**
 * A service's suite: the fixed-seed run (1,000 interleavings by default), then a few interleavings from a random seed
 * (printed), which CI adds to what the fixed seed covers. REPLAY_SEED / REPLAY_INTERLEAVINGS choose a longer run instead.
 */
export function replayEqualsLive(subject: ServiceUnderReplay): void {
  const settings = runSettings({ seed: FIXED_SEED, interleavings: 1000 });
  const chosen = process.env.REPLAY_SEED !== undefined || process.env.REPLAY_ONLY !== undefined;
  const timeout = (count: number) => 60_000 + count * 1000;
  describe(`${subject.service}: replay equals live`, () => {
    it(
      `given ${settings.interleavings} interleavings from seed ${settings.seed}, when each ends, then its read models equal their rebuild from the log and nothing erased is served`,
      async () => {
        expect(await runInterleavings(subject, settings)).toEqual([]);
      },
      timeout(settings.interleavings),
    );

    if (!chosen) {
      const random = { ...settings, seed: randomBytes(4).readUInt32BE() >>> 1, interleavings: 30 };
      it(
        `given 30 interleavings from a random seed (${random.seed}: REPLAY_SEED=${random.seed} REPLAY_INTERLEAVINGS=30 runs them again), then the same holds`,
        async () => {
          expect(await runInterleavings(subject, random)).toEqual([]);
        },
        timeout(30),
      );
    }
  });
}
