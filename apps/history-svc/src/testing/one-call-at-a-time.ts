import { type Document, type ReadModelStore, withCollections } from '@udp/readmodel';
import { aroundEachCall } from '@udp/runtime';

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
  return withCollections(readModels, <T extends Document>(name: string) =>
    aroundEachCall(readModels.collection<T>(name), (_operation, call) => queued(call)),
  );
}
