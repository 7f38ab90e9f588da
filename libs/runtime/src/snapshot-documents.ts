import type { SnapshotStore, StoredSnapshot } from '@udp/eventstore';
import type { ReadModelStore, VersionedDocument } from '@udp/readmodel';

interface SnapshotDocument extends VersionedDocument {
  version: number;
  lastEventId: string;
  state: string;
}

/** Snapshots as documents of the service's read-model database (MongoDB beside KurrentDB), one per stream. */
export class ReadModelSnapshotStore implements SnapshotStore {
  private readonly documents;
  constructor(readModels: ReadModelStore) {
    this.documents = readModels.collection<SnapshotDocument>('snapshots');
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
