import type { Collection, Document, ReadModelStore, Sealing } from './port';

/**
 * `readModels` with its collections taken from `collection` (a wrapper's own: traced, erasing), and every other part
 * passed on as it is, the optional ones included. Two wrappers that listed the parts by hand both left `dropIndex`
 * out, so the indexes a service meant to drop stayed in the embedded files.
 */
export function withCollections(
  readModels: ReadModelStore,
  collection: <T extends Document>(name: string) => Collection<T>,
): ReadModelStore {
  const { dropIndex, caughtUp, scrub, seal, forgetOwner } = readModels;
  return {
    collection,
    ensureIndex: (name, keys, options) => readModels.ensureIndex(name, keys, options),
    ...(dropIndex && { dropIndex: (name: string, keys: Record<string, 1 | -1>) => dropIndex.call(readModels, name, keys) }),
    checkpoints: () => readModels.checkpoints(),
    ...(caughtUp && { caughtUp: () => caughtUp.call(readModels) }),
    ...(scrub && { scrub: () => scrub.call(readModels) }),
    ...(seal && { seal: (name: string, sealing: Sealing) => seal.call(readModels, name, sealing) }),
    ...(forgetOwner && { forgetOwner: (owner: string) => forgetOwner.call(readModels, owner) }),
    ping: () => readModels.ping(),
    close: () => readModels.close(),
  };
}
