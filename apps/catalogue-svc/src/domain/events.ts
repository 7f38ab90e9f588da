import type { CatalogueEvent } from '@udp/contracts';
import { STREAM_CATEGORIES, joinIdParts } from '@udp/eventsourcing';

/**
 * The events of one QC item. Their schemas are in libs/contracts/src/catalogue.ts, with every event schema
 * (docs/architecture.md, "Event sourcing rules").
 */
export type ItemEvent = CatalogueEvent;
export type ItemVersionPublished = Extract<ItemEvent, { type: 'ItemVersionPublished' }>;

export const ITEM_STREAM_PREFIX = STREAM_CATEGORIES.catalogueItem;

/** One stream per catalogue item: its history is the list of its published versions. Public data: no owner. */
export const itemStreamId = (itemId: string) => ITEM_STREAM_PREFIX + joinIdParts(itemId);

/** All events are still at version 1, so this is the identity. */
export function upcast(type: string, data: Record<string, unknown>): ItemEvent {
  return { type, data } as ItemEvent;
}
