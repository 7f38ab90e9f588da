import { MemoryReadModelStore } from '@udp/readmodel';
import { ReadModelSnapshotStore } from './snapshot-documents';

describe('snapshots as read-model documents (beside KurrentDB)', () => {
  it('keeps the newest per stream, replaces one of a stream written again, and deletes by stream', async () => {
    const store = new ReadModelSnapshotStore(new MemoryReadModelStore());
    await store.write('s', { version: 1, revision: 999, lastEventId: 'e999', state: '{"a":1}' });
    await store.write('s', { version: 1, revision: 1999, lastEventId: 'e1999', state: '{"a":2}' });
    expect(await store.read('s')).toEqual({ version: 1, revision: 1999, lastEventId: 'e1999', state: '{"a":2}' });
    // After an erasure the stream starts again at revision 0: its new snapshot replaces the old one.
    await store.write('s', { version: 1, revision: 5, lastEventId: 'n5', state: '{"a":3}' });
    expect((await store.read('s'))?.lastEventId).toBe('n5');
    await store.delete('s');
    expect(await store.read('s')).toBeUndefined();
  });
});
