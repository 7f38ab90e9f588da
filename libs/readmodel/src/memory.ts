import { fieldOf, matches, sortDocuments } from './filter';
import type { CheckpointStore, Collection, Document, Filter, FindOptions, ReadModelStore, VersionedDocument } from './port';

/**
 * Documents in a Map. The first key of each declared index is kept as an equality index
 * (value -> ids), so a query for one user's documents does not scan every user's.
 */
class MemoryCollection<T extends Document> implements Collection<T> {
  private readonly docs = new Map<string, T>();
  private readonly indexes = new Map<string, Map<unknown, Set<string>>>();

  addIndex(field: string): void {
    if (this.indexes.has(field)) return;
    const index = new Map<unknown, Set<string>>();
    this.indexes.set(field, index);
    for (const [id, doc] of this.docs) this.indexAdd(index, fieldOf(doc, field), id);
  }

  private indexAdd(index: Map<unknown, Set<string>>, value: unknown, id: string): void {
    let ids = index.get(value);
    if (!ids) index.set(value, (ids = new Set()));
    ids.add(id);
  }

  private put(id: string, doc: T): void {
    const old = this.docs.get(id);
    for (const [field, index] of this.indexes) {
      if (old) index.get(fieldOf(old, field))?.delete(id);
      this.indexAdd(index, fieldOf(doc, field), id);
    }
    this.docs.set(id, doc);
  }

  private remove(id: string): void {
    const old = this.docs.get(id);
    if (!old) return;
    for (const [field, index] of this.indexes) index.get(fieldOf(old, field))?.delete(id);
    this.docs.delete(id);
  }

  /** The documents that can match: an index lookup when the filter pins an indexed field, else all. */
  private candidates(filter: Filter): Iterable<T> {
    for (const [field, index] of this.indexes) {
      const condition = (filter as Record<string, unknown>)[field];
      if (condition === undefined || (condition !== null && typeof condition === 'object')) continue;
      const ids = index.get(condition) ?? new Set<string>();
      return [...ids].map((id) => this.docs.get(id)!);
    }
    return this.docs.values();
  }

  async get(id: string): Promise<T | null> {
    const doc = this.docs.get(id);
    return doc ? structuredClone(doc) : null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const found = sortDocuments([...this.candidates(filter)].filter((d) => matches(d, filter)), options.sort);
    return (options.limit !== undefined ? found.slice(0, options.limit) : found).map((d) => structuredClone(d));
  }

  async count(filter: Filter): Promise<number> {
    return [...this.candidates(filter)].filter((d) => matches(d, filter)).length;
  }

  async upsertIfNewer(doc: T & VersionedDocument): Promise<boolean> {
    const stored = this.docs.get(doc._id) as (T & VersionedDocument) | undefined;
    if (stored && stored.revision >= doc.revision) return false;
    this.put(doc._id, structuredClone(doc));
    return true;
  }

  async updateMany(filter: Filter, set: Partial<T>): Promise<number> {
    const hits = [...this.candidates(filter)].filter((d) => matches(d, filter));
    for (const doc of hits) this.put(doc._id, { ...doc, ...structuredClone(set) });
    return hits.length;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const hits = [...this.candidates(filter)].filter((d) => matches(d, filter));
    for (const doc of hits) this.remove(doc._id);
    return hits.length;
  }
}

/** Read models in memory: the embedded mode rebuilds them from the event store at start. */
export class MemoryReadModelStore implements ReadModelStore {
  private readonly collections = new Map<string, MemoryCollection<Document>>();
  private readonly positions = new Map<string, bigint>();

  collection<T extends Document>(name: string): Collection<T> {
    return this.memoryCollection(name) as unknown as Collection<T>;
  }

  private memoryCollection(name: string): MemoryCollection<Document> {
    let c = this.collections.get(name);
    if (!c) this.collections.set(name, (c = new MemoryCollection<Document>()));
    return c;
  }

  async ensureIndex(collection: string, keys: Record<string, 1 | -1>): Promise<void> {
    const first = Object.keys(keys)[0];
    if (first) this.memoryCollection(collection).addIndex(first);
  }

  checkpoints(): CheckpointStore {
    return {
      load: async (name) => this.positions.get(name) ?? null,
      save: async (name, position) => void this.positions.set(name, position),
    };
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}
