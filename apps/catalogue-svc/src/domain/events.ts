import type { CatalogueEvent } from '@udp/contracts';

/** The events of one QC item; schemas live in the contracts library. */
export type ItemEvent = CatalogueEvent;
export type ItemVersionPublished = Extract<ItemEvent, { type: 'ItemVersionPublished' }>;

export const ITEM_STREAM_PREFIX = 'qc-item-';

/** One stream per catalogue item: its history is the list of its published versions. */
export const itemStreamId = (itemId: string) => `${ITEM_STREAM_PREFIX}${itemId}`;

/** All events are still at version 1, so this is the identity. */
export function upcast(type: string, data: Record<string, unknown>): ItemEvent {
  return { type, data } as ItemEvent;
}
