import { isDeepStrictEqual } from 'node:util';
import type { Db, Filter as MongoFilter, MongoClient } from 'mongodb';

// Required when the adapter is used: embedded mode never pays for loading the driver.
const driver = () => require('mongodb') as typeof import('mongodb');
import { LastWriteFailure, StoreUnavailableError } from '@udp/eventstore';
import { bindParams, selectFields, sortDocuments } from './filter';
import type {
  CheckpointStore,
  Collection,
  Document,
  Filter,
  FindOptions,
  PreparedFilter,
  PreparedFind,
  PreparedFindOptions,
  ReadModelStore,
  Scalar,
  VersionedDocument,
} from './port';

const DUPLICATE_KEY = 11000;
/** Up to this many values, FerretDB is asked an `$in` as one find per value (see `equalitiesFor`); past it, one scan. */
const FERRETDB_IN_AS_EQUALITIES = 200;
const FERRETDB_FINDS_AT_ONCE = 8;

/** A server that cannot be reached is a 503 for the request (StoreUnavailableError), not a 500. */
async function reachable<R>(operation: () => Promise<R>): Promise<R> {
  try {
    return await operation();
  } catch (error) {
    const m = driver();
    const unreachable = [m.MongoNetworkError, m.MongoServerSelectionError, m.MongoNotConnectedError, m.MongoTopologyClosedError].some(
      (type) => error instanceof type,
    );
    if (unreachable) throw new StoreUnavailableError('read models', (error as Error).message, { cause: error });
    throw error;
  }
}

/** How long a failed write keeps the store DOWN when no write succeeds meanwhile (there is no probe write). */
const WRITE_FAILURE_MEMORY_MS = 30_000;

/**
 * Runs a write, remembering for the health check whether the server refused it (disk full, quota...). A duplicate
 * key is an answer, not a failure; a server that cannot be reached is seen by the ping itself (and remembering it
 * would keep the store DOWN after the server is back).
 */
async function recorded<R>(failures: LastWriteFailure, write: () => Promise<R>): Promise<R> {
  try {
    const result = await write();
    failures.succeeded();
    return result;
  } catch (error) {
    if (error instanceof driver().MongoServerError && error.code !== DUPLICATE_KEY) failures.failed(error);
    throw error;
  }
}

/**
 * One call per value, a few at a time, not a batch's 100 at once: each is a query FerretDB runs on a PostgreSQL
 * connection of its pool. (FerretDB that stopped answering under load was its pool deadlock, whatever the calls:
 * tools/servers/README.md.)
 */
async function inWaves<R>(values: readonly Scalar[], call: (value: Scalar) => Promise<R>): Promise<R[]> {
  const answers: R[] = [];
  for (let at = 0; at < values.length; at += FERRETDB_FINDS_AT_ONCE)
    answers.push(...(await Promise.all(values.slice(at, at + FERRETDB_FINDS_AT_ONCE).map(call))));
  return answers;
}

class MongoCollection<T extends Document> implements Collection<T> {
  constructor(
    private readonly db: Db,
    private readonly name: string,
    private readonly writeFailures: LastWriteFailure,
    /** The server reads the whole collection for an `$in` (FerretDB 1.x). */
    private readonly inScansCollection: boolean,
  ) {}

  private get c() {
    return this.db.collection<Document & Record<string, unknown>>(this.name);
  }

  get(id: string): Promise<T | null> {
    return reachable(async () => (await this.c.findOne({ _id: id })) as T | null);
  }

  getMany(ids: readonly string[]): Promise<T[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.find({ _id: { $in: [...ids] } });
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const split = this.equalitiesFor(filter);
    if (!split) return this.findAsIs(filter, options);
    const parts = await inWaves(split.values, (value) => this.findAsIs({ ...filter, [split.field]: value }, options));
    const found = sortDocuments(parts.flat(), options.sort);
    return options.limit === undefined ? found : found.slice(0, options.limit);
  }

  /**
   * On FerretDB 1.x, a top-level `$in` of a few values as one find per value: FerretDB hands PostgreSQL an equality
   * but not an `$in`, and reads and filters the whole collection for it (25 ids among 20,000 documents: 490 ms as one
   * `$in`, 65 ms as 25 finds at once). Each document holds one value of the field, so the finds' answers are disjoint.
   */
  private equalitiesFor(filter: Filter): { field: string; values: Scalar[] } | null {
    if (!this.inScansCollection) return null;
    for (const [field, condition] of Object.entries(filter)) {
      if (field.startsWith('$') || condition === null || typeof condition !== 'object' || Array.isArray(condition)) continue;
      const { $in, ...others } = condition as { $in?: Scalar[] };
      if ($in && Object.keys(others).length === 0 && $in.length <= FERRETDB_IN_AS_EQUALITIES) return { field, values: [...new Set($in)] };
    }
    return null;
  }

  private findAsIs(filter: Filter, options: FindOptions): Promise<T[]> {
    return reachable(async () => {
      let cursor = this.c.find(filter as MongoFilter<Document>);
      if (options.sort) cursor = cursor.sort(options.sort);
      if (options.limit !== undefined) cursor = cursor.limit(options.limit);
      return (await cursor.toArray()) as T[];
    });
  }

  prepareFind<K extends keyof T & string>(
    filter: PreparedFilter,
    { sort, select }: PreparedFindOptions<K>,
  ): PreparedFind<{ [F in K]: T[F] | null }> {
    const projection = Object.fromEntries([['_id', 0], ...select.map((field) => [field, 1])]);
    return (values, limit) =>
      reachable(async () => {
        let cursor = this.c.find(bindParams(filter, values) as MongoFilter<Document>, { projection });
        if (sort) cursor = cursor.sort(sort);
        if (limit !== undefined) cursor = cursor.limit(limit);
        // A field the document lacks is null, as in the other adapters.
        return (await cursor.toArray()).map((doc) => selectFields(doc as Document, select) as { [F in K]: T[F] | null });
      });
  }

  count(filter: Filter): Promise<number> {
    return reachable(() => this.c.countDocuments(filter as MongoFilter<Document>));
  }

  // The revision condition makes the write idempotent without transactions (FerretDB has none): an
  // older or replayed version either matches nothing or hits the unique _id and is dropped.
  async upsertIfNewer(doc: T & VersionedDocument): Promise<boolean> {
    try {
      const result = await recorded(this.writeFailures, () =>
        this.c.replaceOne({ _id: doc._id, revision: { $lt: doc.revision } }, doc as unknown as Record<string, unknown>, {
          upsert: true,
        }),
      );
      return result.modifiedCount + result.upsertedCount > 0;
    } catch (error) {
      if (error instanceof driver().MongoServerError && error.code === DUPLICATE_KEY) return false;
      throw error;
    }
  }

  /**
   * The same guarded replacements in one ordered `bulkWrite`: when every document is newer (a fresh batch), one round
   * trip. A document the stored one is as new as or newer than matches nothing and hits the unique _id; the bulk
   * write stops there, and which of the others it wrote cannot be told (FerretDB's error names the wrong index), so
   * each is written again alone: one written by the bulk write is now stored as given, and that is its "written".
   */
  async upsertManyIfNewer(docs: ReadonlyArray<T & VersionedDocument>): Promise<boolean[]> {
    if (docs.length === 0) return [];
    const operations = docs.map((doc) => ({
      replaceOne: {
        filter: { _id: doc._id, revision: { $lt: doc.revision } },
        replacement: doc as unknown as Document & Record<string, unknown>,
        upsert: true,
      },
    }));
    try {
      await reachable(() => this.c.bulkWrite(operations, { ordered: true }));
    } catch (error) {
      const m = driver();
      const failures = error instanceof m.MongoBulkWriteError ? [error.writeErrors].flat() : [];
      // Anything but a duplicate key: a failed write, remembered for the health check.
      if (failures.length === 0 || failures.some((failure) => failure.code !== DUPLICATE_KEY)) {
        if (error instanceof m.MongoServerError) this.writeFailures.failed(error);
        throw error;
      }
      const written: boolean[] = [];
      for (const doc of docs) {
        written.push((await this.upsertIfNewer(doc)) || isDeepStrictEqual(await this.get(doc._id), doc));
      }
      return written;
    }
    this.writeFailures.succeeded();
    return docs.map(() => true);
  }

  updateMany(filter: Filter, set: Partial<T>): Promise<number> {
    return reachable(
      async () =>
        (await recorded(this.writeFailures, () => this.c.updateMany(filter as MongoFilter<Document>, { $set: set as Partial<Document> })))
          .matchedCount,
    );
  }

  async deleteMany(filter: Filter): Promise<number> {
    const split = this.equalitiesFor(filter);
    if (!split) return this.deleteAsIs(filter);
    // As `find`: FerretDB scans the collection for an `$in` (an erasure deletes its pages by id).
    const counts = await inWaves(split.values, (value) => this.deleteAsIs({ ...filter, [split.field]: value }));
    return counts.reduce((sum, count) => sum + count, 0);
  }

  private deleteAsIs(filter: Filter): Promise<number> {
    return reachable(
      async () => (await recorded(this.writeFailures, () => this.c.deleteMany(filter as MongoFilter<Document>))).deletedCount,
    );
  }
}

/** Read models in MongoDB (or a wire-compatible server such as FerretDB): no transactions, no change streams. */
export class MongoReadModelStore implements ReadModelStore {
  /** The last write the server refused or failed (disk full...): DOWN until a write succeeds, or for 30 s. */
  private readonly writeFailures = new LastWriteFailure(WRITE_FAILURE_MEMORY_MS);

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    private readonly inScansCollection: boolean,
  ) {}

  static async connect(url: string, database: string): Promise<MongoReadModelStore> {
    const client = new (driver().MongoClient)(url, { serverSelectionTimeoutMS: 5000 });
    await client.connect();
    // FerretDB names itself in buildInfo.
    const ferretdb = 'ferretdbVersion' in (await client.db('admin').command({ buildInfo: 1 }));
    return new MongoReadModelStore(client, client.db(database), ferretdb);
  }

  collection<T extends Document>(name: string): Collection<T> {
    return new MongoCollection<T>(this.db, name, this.writeFailures, this.inScansCollection);
  }

  checkpoints(): CheckpointStore {
    const c = this.db.collection<{ _id: string; position: string }>('_checkpoints');
    return {
      load: async (name) => {
        const doc = await c.findOne({ _id: name });
        return doc ? BigInt(doc.position) : null;
      },
      save: async (name, position) => {
        await recorded(this.writeFailures, () => c.replaceOne({ _id: name }, { position: position.toString() }, { upsert: true }));
      },
    };
  }

  async ensureIndex(collection: string, keys: Record<string, 1 | -1>): Promise<void> {
    await this.db.collection(collection).createIndex(keys);
  }

  /** Up when the server answers and the last write (within 30 s) did not fail. */
  async ping(): Promise<boolean> {
    if (this.writeFailures.current() !== null) return false;
    try {
      await this.db.command({ ping: 1 });
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
