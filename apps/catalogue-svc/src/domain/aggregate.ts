import { CatalogueEvent } from '@udp/contracts';
import { type Aggregate, oneStreamEach } from '@udp/eventsourcing';
import { type ItemCommand, type ItemState, itemDecider } from './decider';

/**
 * The events of one QC item. Their schemas are in libs/contracts/src/catalogue.ts, with every event schema
 * (docs/architecture.md, "Event sourcing rules").
 */
export type ItemEvent = CatalogueEvent;
export type ItemVersionPublished = Extract<ItemEvent, { type: 'ItemVersionPublished' }>;

/** One stream per catalogue item (`qc-item-<itemId>`): its history is the list of its published versions. Public data: no owner. */
export const itemStreams = { ...oneStreamEach('qc-item-'), events: CatalogueEvent };
export const itemStreamId = (itemId: string) => itemStreams.streamOf(itemId).id;

/** A catalogue item as an aggregate. Only the import writes, one item at a time; a race is re-read three times. */
export const itemAggregate: Aggregate<ItemCommand, ItemEvent, ItemState, string> = {
  ...itemStreams,
  decider: itemDecider,
  conflictRetries: 3,
};
