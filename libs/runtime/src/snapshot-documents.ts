import type { SnapshotStore, StoredSnapshot } from '@udp/eventstore';
import type { Collection, ReadModelStore, VersionedDocument } from '@udp/readmodel';

interface SnapshotDocument extends VersionedDocument {
  version: number;
  lastEventId: string;
  state: string;
}

/** The collection of the snapshots: a service whose states are users' seals it (`ReadModelStore.seal`). */
export const SNAPSHOTS_COLLECTION = 'snapshots';

/** Snapshots as documents of the service's read-model database (MongoDB beside KurrentDB), one per stream. */
export class ReadModelSnapshotStore implements SnapshotStore {
  private collection: Collection<SnapshotDocument> | null = null;
  constructor(private readonly readModels: ReadModelStore) {}

  /** Taken at first use, not when the adapters open: the service declares how it is sealed in between. */
  private get documents(): Collection<SnapshotDocument> {
    return (this.collection ??= this.readModels.collection<SnapshotDocument>(SNAPSHOTS_COLLECTION));
  }
  async read(streamId: string): Promise<StoredSnapshot | undefined> {
    const doc = await this.documents.get(streamId);
    return doc ? { version: doc.version, revision: doc.revision, lastEventId: doc.lastEventId, state: doc.state } : undefined;
  }
  async write(streamId: string, snapshot: StoredSnapshot): Promise<void> {
    // Deleted first: a stream written again after an erasure starts at lower revisions than its old snapshot.
    if (snapshot.revision < ((await this.documents.get(streamId))?.revision ?? -1)) await this.delete(streamId);
    await this.documents.upsertIfNewer({ _id: streamId, ...snapshot });
  }
  async delete(streamId: string): Promise<void> {
    await this.documents.deleteMany({ _id: streamId });
  }
  async close(): Promise<void> {}
}
