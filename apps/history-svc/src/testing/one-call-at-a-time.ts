import { type Collection, type Document, type ReadModelStore, withCollections } from '@udp/readmodel';

/**
 * The store with one call in flight at a time, whoever makes it: for tests of replicas racing each other on a store
 * whose conditional writes are not atomic. FerretDB 1.x reads a document and writes it in two steps, so two replicas'
 * compare-and-set on the same revision can both succeed (tools/servers/README.md, "Limits of FerretDB"); MongoDB's
 * cannot. One call at a time keeps every conditional write whole, and still lets the replicas interleave between
 * their calls, which is what such a test is about: reads that go stale and compare-and-sets that are lost.
 */
export function oneCallAtATime(readModels: ReadModelStore): ReadModelStore {
  let last: Promise<unknown> = Promise.resolve();
  const queued = <R>(call: () => Promise<R>): Promise<R> => {
    const result = last.then(call, call);
    last = result.catch(() => undefined);
    return result;
  };
  return withCollections(readModels, <T extends Document>(name: string): Collection<T> => {
    const c = readModels.collection<T>(name);
    return {
      get: (id) => queued(() => c.get(id)),
      getMany: (ids) => queued(() => c.getMany(ids)),
      find: (filter, options) => queued(() => c.find(filter, options)),
      prepareFind: (filter, options) => {
        const run = c.prepareFind(filter, options);
        return (values, limit) => queued(() => run(values, limit));
      },
      count: (filter) => queued(() => c.count(filter)),
      upsertIfNewer: (doc) => queued(() => c.upsertIfNewer(doc)),
      upsertManyIfNewer: (docs) => queued(() => c.upsertManyIfNewer(docs)),
      updateMany: (filter, set) => queued(() => c.updateMany(filter, set)),
      deleteMany: (filter) => queued(() => c.deleteMany(filter)),
    };
  });
}
