import type { QcItemDefinition } from '@udp/contracts';
import { type Projection, aggregateProjection } from '@udp/eventsourcing';
import type { Collection, ReadModelStore } from '@udp/readmodel';
import { itemStreams } from '../domain/aggregate';

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
  return aggregateProjection({
    name: 'qc-item-versions',
    aggregate: itemStreams,
    async apply(event, { revision }) {
      switch (event.type) {
        case 'ItemVersionPublished': {
          const { item, publishedAt } = event.data;
          const earlier = await versions.find({ itemId: item.ID, revision: { $lt: revision } }, { sort: { revision: 1 } });
          await versions.upsertIfNewer({
            _id: versionDocumentId(item.ID, item.Version),
            itemId: item.ID,
            version: item.Version,
            item,
            publishedAt,
            versionsAtPublication: [...earlier.map((d) => d.version), item.Version],
            revision,
          });
          onChange();
          return;
        }
      }
    },
  });
}
