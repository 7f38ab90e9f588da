import {
  bindParams,
  cloneData,
  comparatorFor,
  compileFilter,
  fieldOf,
  numericBounds,
  outsideBounds,
  selectFields,
  sortDocuments,
} from './filter';
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
  Sort,
  VersionedDocument,
} from './port';

/**
 * Documents in a Map. Each declared index keeps, per value of its first key, the documents sorted by the
 * remaining keys: a query that pins the first key finds its candidates without scanning other users'
 * documents, and one whose sort matches the index reads them in order and stops at the limit.
 */
interface SortedIndex {
  partitionField: string;
  sort: Sort;
  compare: (x: Document, y: Document) => number;
  partitions: Map<unknown, Partition>;
}

/**
 * The documents of one partition: only their set until the partition is first read, then in the index's order,
 * kept from then on. A start writes a million documents and reads none: keeping every partition in order
 * through that replay cost a search and an array splice per write; sorting each once, when read, does not.
 * Exactly one of the two is set.
 */
interface Partition {
  members: Set<Document> | null;
  ordered: Document[] | null;
}

/**
 * Stored documents are never changed in place (every update stores a new object), so a list of them is a
 * consistent copy of the collection at the moment it was taken, however the collection changes afterwards.
 */
class MemoryCollection<T extends Document> implements Collection<T> {
  private readonly docs = new Map<string, T>();
  private readonly indexes: SortedIndex[] = [];

  addIndex(keys: Record<string, 1 | -1>): void {
    const [partitionField, ...rest] = Object.keys(keys);
    if (!partitionField || this.indexes.some((i) => i.partitionField === partitionField && sameSort(i.sort, rest, keys))) return;
    const sort: Sort = Object.fromEntries(rest.map((k) => [k, keys[k]]));
    const index: SortedIndex = { partitionField, sort, compare: comparatorFor(sort), partitions: new Map() };
    this.indexes.push(index);
    for (const doc of this.docs.values()) this.indexInsert(index, doc);
  }

  /** A partition's documents in the index's order (sorted now if it was never read: stable, so ties keep insertion order). */
  private ordered(index: SortedIndex, value: unknown): Document[] {
    const partition = index.partitions.get(value);
    if (!partition) return [];
    if (!partition.ordered) {
      partition.ordered = [...partition.members!].sort(index.compare);
      partition.members = null;
    }
    return partition.ordered;
  }

  /** Every document, as stored (see the class comment). */
  documents(): T[] {
    return [...this.docs.values()];
  }

  private indexInsert(index: SortedIndex, doc: Document): void {
    const value = fieldOf(doc, index.partitionField);
    const partition = index.partitions.get(value);
    if (!partition) return void index.partitions.set(value, { members: new Set([doc]), ordered: null });
    if (partition.members) return void partition.members.add(doc);
    const list = partition.ordered!;
    // After its equals: ties keep the order of insertion.
    list.splice(
      firstPosition(list, (other) => index.compare(other, doc) > 0),
      0,
      doc,
    );
  }

  private indexRemove(index: SortedIndex, doc: Document): void {
    const partition = index.partitions.get(fieldOf(doc, index.partitionField));
    if (!partition) return;
    if (partition.members) return void partition.members.delete(doc);
    const list = partition.ordered!;
    // From the first of its equals on: a long history (10,000 entries of one user, each recorded again and
    // again) made indexOf the cost of a replay.
    for (let at = firstPosition(list, (other) => index.compare(other, doc) >= 0); at < list.length; at++) {
      if (list[at] === doc) return void list.splice(at, 1);
      if (index.compare(list[at], doc) !== 0) break;
    }
    // Not where its sort keys say (cannot happen while documents are never changed in place): the safe way.
    const at = list.indexOf(doc);
    if (at >= 0) list.splice(at, 1);
  }

  private put(id: string, doc: T): void {
    const old = this.docs.get(id);
    for (const index of this.indexes) {
      if (old) this.indexRemove(index, old);
      this.indexInsert(index, doc);
    }
    this.docs.set(id, doc);
  }

  private remove(id: string): void {
    const old = this.docs.get(id);
    if (!old) return;
    for (const index of this.indexes) this.indexRemove(index, old);
    this.docs.delete(id);
  }

  /** The index whose partition the filter pins, preferring one already sorted as asked. */
  private indexFor(filter: Filter, sort?: Sort): { index: SortedIndex; list: Document[] } | null {
    let chosen: { index: SortedIndex; value: unknown } | null = null;
    for (const index of this.indexes) {
      const condition = (filter as Record<string, unknown>)[index.partitionField];
      if (condition === undefined || (condition !== null && typeof condition === 'object')) continue;
      if (sort && sortsAs(index.sort, sort)) {
        chosen = { index, value: condition };
        break;
      }
      chosen ??= { index, value: condition };
    }
    return chosen && { index: chosen.index, list: this.ordered(chosen.index, chosen.value) };
  }

  /** Matching documents in the requested order, reading no further than needed when an index is sorted that way. */
  private select(filter: Filter, options: FindOptions = {}): T[] {
    const indexed = this.indexFor(filter, options.sort);
    const matches = compileFilter(filter);
    if (indexed && options.sort && sortsAs(indexed.index.sort, options.sort)) {
      const found: T[] = [];
      // A paging cursor (`date < x`, or `$or` of such) skips the documents before it with one comparison each.
      const sortField = Object.keys(indexed.index.sort)[0];
      const bounds = sortField === undefined ? undefined : numericBounds(filter, sortField);
      for (const doc of indexed.list) {
        if (options.limit !== undefined && found.length >= options.limit) break;
        if (bounds && outsideBounds(fieldOf(doc, sortField!), bounds)) continue;
        if (matches(doc)) found.push(doc as T);
      }
      return found;
    }
    const candidates = indexed ? (indexed.list as T[]) : [...this.docs.values()];
    const sorted = sortDocuments(candidates.filter(matches), options.sort);
    return options.limit !== undefined ? sorted.slice(0, options.limit) : sorted;
  }

  async get(id: string): Promise<T | null> {
    const doc = this.docs.get(id);
    return doc ? cloneData(doc) : null;
  }

  async getMany(ids: readonly string[]): Promise<T[]> {
    return ids.flatMap((id) => {
      const doc = this.docs.get(id);
      return doc ? [cloneData(doc)] : [];
    });
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const found = this.select(filter, options);
    // Stored documents are never changed in place (`put` stores a new object), so a read-only reader may have them.
    return options.readOnly ? found : found.map((d) => cloneData(d));
  }

  prepareFind<K extends keyof T & string>(
    filter: PreparedFilter,
    { sort, select }: PreparedFindOptions<K>,
  ): PreparedFind<{ [F in K]: T[F] | null }> {
    return async (values, limit) =>
      this.select(bindParams(filter, values), { sort, limit }).map(
        (doc) => cloneData(selectFields(doc, select)) as { [F in K]: T[F] | null },
      );
  }

  async count(filter: Filter): Promise<number> {
    return this.select(filter).length;
  }

  async upsertIfNewer(doc: T & VersionedDocument): Promise<boolean> {
    const stored = this.docs.get(doc._id) as (T & VersionedDocument) | undefined;
    if (stored && stored.revision >= doc.revision) return false;
    this.put(doc._id, cloneData(doc));
    return true;
  }

  async upsertManyIfNewer(docs: ReadonlyArray<T & VersionedDocument>): Promise<boolean[]> {
    return Promise.all(docs.map((doc) => this.upsertIfNewer(doc)));
  }

  async updateMany(filter: Filter, set: Partial<T>): Promise<number> {
    const hits = this.select(filter);
    for (const doc of hits) this.put(doc._id, { ...doc, ...cloneData(set) });
    return hits.length;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const hits = this.select(filter);
    this.removeAll(hits);
    return hits.length;
  }

  private removeAll(hits: T[]): void {
    if (hits.length < 64) {
      for (const doc of hits) this.remove(doc._id);
      return;
    }
    // Many at once (a user's erasure: 100,000 history entries): one pass over each touched index partition
    // instead of a search and a splice per document, which would be quadratic.
    const gone = new Set<Document>(hits);
    for (const index of this.indexes) {
      for (const value of new Set(hits.map((doc) => fieldOf(doc, index.partitionField)))) {
        const partition = index.partitions.get(value);
        if (!partition) continue;
        if (partition.ordered) partition.ordered = partition.ordered.filter((doc) => !gone.has(doc));
        else partition.members = new Set([...partition.members!].filter((doc) => !gone.has(doc)));
        if ((partition.ordered?.length ?? partition.members!.size) === 0) index.partitions.delete(value);
      }
    }
    for (const doc of hits) this.docs.delete(doc._id);
  }
}

/** Every collection's documents and every checkpoint, taken at one instant (documents shared, never changed). */
export interface ReadModelImage {
  checkpoints: Map<string, bigint>;
  collections: Map<string, Document[]>;
}

/** Read models in memory: for unit tests, and for a process on KurrentDB without MongoDB (rebuilt at every start). */
export class MemoryReadModelStore implements ReadModelStore {
  private readonly collections = new Map<string, MemoryCollection<Document>>();
  private readonly positions = new Map<string, bigint>();

  /** A consistent copy: cheap (references only), and unaffected by what the projectors do next. */
  image(): ReadModelImage {
    return {
      checkpoints: new Map(this.positions),
      collections: new Map([...this.collections].map(([name, c]) => [name, c.documents()])),
    };
  }

  collection<T extends Document>(name: string): Collection<T> {
    return this.memoryCollection(name) as unknown as Collection<T>;
  }

  private memoryCollection(name: string): MemoryCollection<Document> {
    let c = this.collections.get(name);
    if (!c) this.collections.set(name, (c = new MemoryCollection<Document>()));
    return c;
  }

  async ensureIndex(collection: string, keys: Record<string, 1 | -1>): Promise<void> {
    this.memoryCollection(collection).addIndex(keys);
  }

  checkpoints(): CheckpointStore {
    return {
      load: async (name) => this.positions.get(name) ?? null,
      save: async (name, position) => {
        this.positions.set(name, position);
      },
    };
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}

/** Binary search in a sorted list: the first position whose document passes `test` (false for all before it). */
function firstPosition(list: Document[], test: (doc: Document) => boolean): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (test(list[mid])) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** An index in `indexSort` order lists documents in `wanted` order too: `wanted` is its beginning. */
function sortsAs(indexSort: Sort, wanted: Sort): boolean {
  const keys = Object.keys(indexSort);
  const fields = Object.keys(wanted);
  return fields.length <= keys.length && fields.every((k, i) => k === keys[i] && indexSort[k] === wanted[k]);
}

function sameSort(indexSort: Sort, fields: string[], wanted: Record<string, 1 | -1>): boolean {
  const keys = Object.keys(indexSort);
  return keys.length === fields.length && keys.every((k, i) => k === fields[i] && indexSort[k] === wanted[k]);
}
