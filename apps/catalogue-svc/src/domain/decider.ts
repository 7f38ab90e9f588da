import type { QcItemDefinition } from '@udp/contracts';
import { type Command, type Decider, conflict, foldByEvolve, invalid } from '@udp/eventsourcing';
import type { ItemEvent } from './aggregate';
import { fingerprint, itemProblems } from './rules';

export type PublishItemVersion = Command<'PublishItemVersion', { item: QcItemDefinition }>;
export type ItemCommand = PublishItemVersion;

export interface ItemState {
  itemId: string | null;
  /** version -> fingerprint of its content. */
  published: ReadonlyMap<string, string>;
}

/**
 * Publishes a version once. The same content again changes nothing (imports are idempotent); other
 * content under a published version is refused, because a published version is immutable.
 */
function publishItemVersion({ data, metadata }: PublishItemVersion, state: ItemState): ItemEvent[] {
  const { item } = data;
  const problems = itemProblems(item);
  if (problems.length) throw invalid(`item ${item.ID} version ${item.Version}: ${problems.join('; ')}`);
  if (state.itemId !== null && state.itemId !== item.ID) throw invalid(`this stream holds item ${state.itemId}, not ${item.ID}`);
  const stored = state.published.get(item.Version);
  if (stored === fingerprint(item)) return [];
  if (stored !== undefined)
    throw conflict(`item ${item.ID} version ${item.Version} is published with other content; publish a new version instead`);
  return [{ type: 'ItemVersionPublished', data: { item, publishedAt: metadata.now } }];
}

export function decide(command: ItemCommand, state: ItemState): ItemEvent[] {
  switch (command.type) {
    case 'PublishItemVersion':
      return publishItemVersion(command, state);
  }
}

export function initialState(): ItemState {
  return { itemId: null, published: new Map() };
}

export function evolve(state: ItemState, event: ItemEvent): ItemState {
  switch (event.type) {
    case 'ItemVersionPublished': {
      const { item } = event.data;
      return { itemId: item.ID, published: new Map(state.published).set(item.Version, fingerprint(item)) };
    }
  }
}

export const itemDecider: Decider<ItemCommand, ItemEvent, ItemState> = { decide, evolve, initialState, fold: foldByEvolve(evolve) };
