import type { QcItemDefinition } from '@udp/contracts';
import type { Projection } from '@udp/eventsourcing';
import type { Collection, ReadModelStore } from '@udp/readmodel';
import { ITEM_STREAM_PREFIX, upcast } from '../domain/events';

/** One document per published item version, with the versions published up to it (its immutable ItemInfo). */
export interface ItemVersionDocument {
  _id: string;
  itemId: string;
  version: string;
  item: QcItemDefinition;
  publishedAt: number;
  /** Versions of the item published before this one, and this one, in publication order. */
  versionsAtPublication: string[];
  revision: number;
}

export const ITEM_VERSIONS_COLLECTION = 'qc_item_versions';
export const versionDocumentId = (itemId: string, version: string) => `${itemId}@${version}`;

export function itemVersions(readModels: ReadModelStore): Collection<ItemVersionDocument> {
  return readModels.collection<ItemVersionDocument>(ITEM_VERSIONS_COLLECTION);
}

/**
 * Keeps `qc_item_versions` up to date. Writes are conditional on the stream revision, so a replayed event
 * changes nothing. `onChange` tells the serialized view that the catalogue may have changed.
 */
export function catalogueProjection(readModels: ReadModelStore, onChange: () => void): Projection {
  const versions = itemVersions(readModels);
  return {
    name: 'qc-item-versions',
    streamPrefixes: [ITEM_STREAM_PREFIX],
    async apply(recorded) {
      const event = upcast(recorded.type, recorded.data);
      switch (event.type) {
        case 'ItemVersionPublished': {
          const { item, publishedAt } = event.data;
          const earlier = await versions.find({ itemId: item.ID, revision: { $lt: recorded.revision } }, { sort: { revision: 1 } });
          await versions.upsertIfNewer({
            _id: versionDocumentId(item.ID, item.Version),
            itemId: item.ID,
            version: item.Version,
            item,
            publishedAt,
            versionsAtPublication: [...earlier.map((d) => d.version), item.Version],
            revision: recorded.revision,
          });
          onChange();
          return;
        }
      }
    },
  };
}
