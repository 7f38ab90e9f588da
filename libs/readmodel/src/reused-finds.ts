import type { PreparedFind } from './port';

/**
 * Prepared finds kept by their owner (a collection, a read model) and the shape of query they answer (which filters
 * it has, named by the caller), made when a shape is first asked: a hot query then binds its values to the statement
 * of its shape and translates nothing. The owner's finds go with it.
 */
const finds = new WeakMap<object, Map<string, PreparedFind<unknown>>>();

export function reusedFind<R>(owner: object, shape: string, prepare: () => PreparedFind<R>): PreparedFind<R> {
  let ofOwner = finds.get(owner);
  if (!ofOwner) finds.set(owner, (ofOwner = new Map()));
  let find = ofOwner.get(shape);
  if (!find) ofOwner.set(shape, (find = prepare() as PreparedFind<unknown>));
  // What a shape's `prepare` made: one shape is always prepared with the same selected fields.
  return find as PreparedFind<R>;
}
