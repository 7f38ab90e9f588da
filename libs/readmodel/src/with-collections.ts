import type { Collection, Document, ReadModelStore } from './port';

/**
 * `readModels` with its collections taken from `collection` (a wrapper's own: traced, erasing), and every other part
 * passed on as it is, the optional ones included. Two wrappers that listed the parts by hand both left `dropIndex`
 * out, so the indexes a service meant to drop stayed in the embedded files.
 */
export function withCollections(
  readModels: ReadModelStore,
  collection: <T extends Document>(name: string) => Collection<T>,
): ReadModelStore {
  const { dropIndex, caughtUp, scrub } = readModels;
  return {
    collection,
    ensureIndex: (name, keys, options) => readModels.ensureIndex(name, keys, options),
    ...(dropIndex && { dropIndex: (name: string, keys: Record<string, 1 | -1>) => dropIndex.call(readModels, name, keys) }),
    checkpoints: () => readModels.checkpoints(),
    ...(caughtUp && { caughtUp: () => caughtUp.call(readModels) }),
    ...(scrub && { scrub: () => scrub.call(readModels) }),
    ping: () => readModels.ping(),
    close: () => readModels.close(),
  };
}

/** What a call of a collection does, as a span names it. */
export type CollectionOperation = 'find' | 'count' | 'update' | 'delete';

/**
 * `collection` with every call (a prepared find's runs included) made through `around`, told which operation it is:
 * one list of the collection's calls for every wrapper that does the same around each (tracing, tests that queue
 * them), so a call added to the port cannot be left out of one of them.
 */
export function aroundEachCall<T extends Document>(
  collection: Collection<T>,
  around: <R>(operation: CollectionOperation, call: () => Promise<R>) => Promise<R>,
): Collection<T> {
  return {
    get: (id) => around('find', () => collection.get(id)),
    getMany: (ids) => around('find', () => collection.getMany(ids)),
    find: (filter, options) => around('find', () => collection.find(filter, options)),
    prepareFind: (filter, options) => {
      const run = collection.prepareFind(filter, options);
      return (values, limit) => around('find', () => run(values, limit));
    },
    count: (filter) => around('count', () => collection.count(filter)),
    upsertIfNewer: (doc) => around('update', () => collection.upsertIfNewer(doc)),
    upsertManyIfNewer: (docs) => around('update', () => collection.upsertManyIfNewer(docs)),
    updateMany: (filter, set) => around('update', () => collection.updateMany(filter, set)),
    deleteMany: (filter) => around('delete', () => collection.deleteMany(filter)),
  };
}
