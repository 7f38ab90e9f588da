/**
 * The read-model port: documents in named collections, queried with a small subset of MongoDB's filter
 * language that the memory adapter implements exactly as MongoDB does.
 */

export type Scalar = string | number | boolean | null;
export type FieldCondition =
  Scalar | { $eq?: Scalar; $ne?: Scalar; $gt?: Scalar; $gte?: Scalar; $lt?: Scalar; $lte?: Scalar; $in?: Scalar[] };
export type Filter = { [field: string]: FieldCondition | Filter[] | undefined } & { $or?: Filter[]; $and?: Filter[] };
export type Sort = Record<string, 1 | -1>;

export interface Document {
  _id: string;
}

/** Documents that remember the stream revision they reflect, so a replayed event changes nothing. */
export interface VersionedDocument extends Document {
  revision: number;
}

export interface FindOptions {
  sort?: Sort;
  limit?: number;
  /**
   * The caller only reads the documents and never changes them: an adapter may hand out the ones it holds
   * (the memory store then skips its copy). A document handed out stays as it was; a later change stores another.
   */
  readOnly?: boolean;
}

/**
 * A value a prepared find is given each time it runs, standing in its filter for a scalar of one type
 * (`param('before', 'number')`): the filter's shape, and so its translation, is fixed once.
 */
export interface Param {
  readonly $param: string;
  readonly type: 'string' | 'number' | 'boolean';
}

export const param = (name: string, type: Param['type']): Param => ({ $param: name, type });

export const isParam = (value: unknown): value is Param =>
  value !== null && typeof value === 'object' && typeof (value as Param).$param === 'string';

type Operand = Scalar | Param;
export type PreparedCondition =
  Operand | { $eq?: Operand; $ne?: Operand; $gt?: Operand; $gte?: Operand; $lt?: Operand; $lte?: Operand; $in?: Scalar[] };
/** A filter whose scalars may be `Param`s (not inside `$in`). */
export type PreparedFilter = { [field: string]: PreparedCondition | PreparedFilter[] | undefined } & {
  $or?: PreparedFilter[];
  $and?: PreparedFilter[];
};

/**
 * A find prepared once: run with its params' values (by name) and a limit, it answers the selected fields of the
 * matching documents in the prepared order (a missing field is null). What a hot read asks for: no filter
 * translated per call, and only the fields it shows (SQLite: the selected fields get columns of their own, so a
 * page of answers is read without parsing a document).
 */
export type PreparedFind<R> = (params: Readonly<Record<string, Scalar>>, limit?: number) => Promise<R[]>;

export interface PreparedFindOptions<K extends string> {
  sort?: Sort;
  select: readonly K[];
}

export interface Collection<T extends Document> {
  get(id: string): Promise<T | null>;
  /** The stored documents among `ids`, in no particular order (a missing one is left out): one round trip for many. */
  getMany(ids: readonly string[]): Promise<T[]>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  prepareFind<K extends keyof T & string>(filter: PreparedFilter, options: PreparedFindOptions<K>): PreparedFind<{ [F in K]: T[F] | null }>;
  count(filter: Filter): Promise<number>;
  /** Writes `doc` unless the stored one has the same or a newer revision. True when written. */
  upsertIfNewer(doc: T & VersionedDocument): Promise<boolean>;
  /**
   * `upsertIfNewer` for each of `docs` (distinct ids) in one round trip; answers, in their order, which were written (a
   * document another writer stored identical at the same revision meanwhile may count as written too). Not atomic: a failure may leave some written, and doing them all again is safe (each is guarded by its revision).
   */
  upsertManyIfNewer(docs: ReadonlyArray<T & VersionedDocument>): Promise<boolean[]>;
  /** Sets fields on every document matching the filter; returns how many matched. */
  updateMany(filter: Filter, set: Partial<T>): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
}

export interface CheckpointStore {
  load(name: string): Promise<bigint | null>;
  save(name: string, position: bigint): Promise<void>;
  /**
   * (Optional) `apply` (a projector's batch), then `save` (its checkpoint or its segments' claims), committed as one:
   * every write both make through the read-model store these checkpoints belong to (any of its collections, and its
   * checkpoints) in one transaction, none of them when either throws. Reads inside see the unit's own writes. An
   * `apply` that writes nothing to the store (a publisher: its writes go to the bus) costs nothing more: `save` then
   * runs alone, as without it. An adapter without it (memory, MongoDB, SQLite: its group commit already writes a
   * checkpoint in the transaction of the documents it covers) leaves `applyAndSave` to run one after the other.
   */
  atomically?<R>(apply: () => Promise<void>, save: () => Promise<R>): Promise<R>;
}

/**
 * `apply`, then `save`: in one transaction when the store can (`CheckpointStore.atomically`), else one after the other
 * (a crash in between applies the batch again: projections are idempotent). `save` never runs when `apply` throws.
 */
export async function applyAndSave<R>(checkpoints: CheckpointStore, apply: () => Promise<void>, save: () => Promise<R>): Promise<R> {
  if (checkpoints.atomically) return checkpoints.atomically(apply, save);
  await apply();
  return save();
}

export interface IndexOptions {
  queriedByProjection?: boolean;
  /**
   * Fields the index also holds after its keys, so that a query reading only them and the keys is answered from the
   * index alone (SQLite: a covering index; an adapter without it ignores them).
   */
  include?: readonly string[];
}

/**
 * How a sealed collection keeps a field that queries name (`Sealing.fields`):
 * - `plain`: as it is (not the user's data: dates, revisions, flags);
 * - `owner`: a keyed hash with the owner's key (equality, and an order of its own); a filter naming one names the owner
 *   too (by the owner field's equality);
 * - `store`: a keyed hash with the store's key, for a query across owners (an item id); its owner is then not in the
 *   row for whoever reads it: the owner field is `owner`-hashed;
 * - `presence`: only whether it is null (a filter on it compares with null only).
 */
export type SealedField = 'plain' | 'owner' | 'store' | 'presence';

/**
 * A collection of users' documents kept sealed by a store that seals (PostgreSQL: each owner's documents encrypted
 * with a key of the owner's, destroyed by `forgetOwner`, so that no byte of them stays readable in old row versions
 * or the WAL). Only the fields named here can be queried; the document is read whole from its sealed copy.
 */
export interface Sealing {
  /** The field naming a document's owner (a user id); kept `owner`-hashed. Absent: the owner is `ownerOfId(_id)`. */
  ownerField?: string;
  /** The owner of a document id: ids are then kept hashed with the owner's key. Absent: with the store's key. */
  ownerOfId?: (id: string) => string;
  fields: Readonly<Record<string, SealedField>>;
}

export interface ReadModelStore {
  collection<T extends Document>(name: string): Collection<T>;
  /**
   * Declares an index; queries stay correct without it, only slower. `queriedByProjection`: the projection itself
   * queries by it, so a store that builds indexes once a rebuild has caught up (SQLite) builds this one at once.
   */
  ensureIndex(collection: string, keys: Record<string, 1 | -1>, options?: IndexOptions): Promise<void>;
  /**
   * (Optional) Removes an index `ensureIndex` declared with these keys, if there is one: a mode that no longer queries
   * by it stops paying for it on every write. An adapter without it keeps the index (only slower writes).
   */
  dropIndex?(collection: string, keys: Record<string, 1 | -1>): Promise<void>;
  checkpoints(): CheckpointStore;
  /**
   * The service's projectors caught up with the event store at start. An adapter that put work off while they
   * rebuilt it from nothing (SQLite: its indexes, built at once afterwards) does it now, before the service answers.
   */
  caughtUp?(): Promise<void>;
  /**
   * Leaves no byte of the documents deleted so far in the adapter's files (SQLite: stale copies of changed rows stay
   * in free page space until the file is rewritten). The erasure participant asks it after deleting a user's
   * documents, before confirming. An adapter whose deletions leave nothing behind has none.
   */
  scrub?(): Promise<void>;
  /**
   * (Optional) Declares `collection` sealed, before its first use: a store that seals (PostgreSQL) keeps its documents
   * as `sealing` says; the others ignore it (their erasure leaves no byte by other means, or is documented).
   */
  seal?(collection: string, sealing: Sealing): void;
  /**
   * (Optional) Destroys the owner's key after their documents were deleted, then scrubs it from the store's files
   * (PostgreSQL): what may stay of their documents in old row versions and WAL segments is then unreadable. A
   * document of the owner written afterwards gets a new key.
   */
  forgetOwner?(owner: string): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
