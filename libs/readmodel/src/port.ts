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

export interface Collection<T extends Document> {
  get(id: string): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  count(filter: Filter): Promise<number>;
  /** Writes `doc` unless the stored one has the same or a newer revision. True when written. */
  upsertIfNewer(doc: T & VersionedDocument): Promise<boolean>;
  /** Sets fields on every document matching the filter; returns how many matched. */
  updateMany(filter: Filter, set: Partial<T>): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
}

export interface CheckpointStore {
  load(name: string): Promise<bigint | null>;
  save(name: string, position: bigint): Promise<void>;
}

export interface IndexOptions {
  queriedByProjection?: boolean;
}

export interface ReadModelStore {
  collection<T extends Document>(name: string): Collection<T>;
  /**
   * Declares an index; queries stay correct without it, only slower. `queriedByProjection`: the projection itself
   * queries by it, so a store that builds indexes once a rebuild has caught up (SQLite) builds this one at once.
   */
  ensureIndex(collection: string, keys: Record<string, 1 | -1>, options?: IndexOptions): Promise<void>;
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
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
