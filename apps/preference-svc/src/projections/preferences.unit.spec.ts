import { ForeignEventError } from '@udp/eventsourcing';
import type { RecordedEvent } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { recordedEvents } from '@udp/test-system';
import { type PreferenceEvent, preferenceStream } from '../domain/aggregate';
import { preferenceDocuments, preferenceKeys, preferenceProjection } from './preferences';

/** preference_documents and preference_keys: given events, the rows; a replayed event changes nothing. */
const written = (key: string, document: Record<string, unknown>): PreferenceEvent => ({
  type: 'PreferenceWritten',
  data: { key, document, operation: { kind: 'replace' } },
});
const deleted = (key: string): PreferenceEvent => ({ type: 'PreferenceDeleted', data: { key } });

async function project(events: RecordedEvent[]) {
  const readModels = new MemoryReadModelStore();
  const projection = preferenceProjection(readModels);
  for (const event of events) await projection.apply(event);
  const documents = preferenceDocuments(readModels);
  const keys = preferenceKeys(readModels);
  return {
    projection,
    documents,
    rows: async (userId: string) => ({
      documents: await documents.find({ userId }, { sort: { key: 1 } }),
      keys: await keys.find({ userId }, { sort: { key: 1 } }),
    }),
  };
}

const settingsEvents = [written('settings', { theme: 'dark' }), written('settings', { theme: 'light', $weird: { 'a.b': 1 } })];

describe('preferences projection', () => {
  it('keeps the latest document as JSON text and the key, by (user, key)', async () => {
    const { rows } = await project([
      ...recordedEvents(preferenceStream('alice', 'settings'), settingsEvents),
      ...recordedEvents(preferenceStream('alice', 'a/b'), [written('a/b', { x: 1 })], 0, 10n),
    ]);
    expect(await rows('alice')).toEqual({
      documents: [
        { _id: 'alice/a/b', userId: 'alice', key: 'a/b', deleted: false, json: '{"x":1}', revision: 0 },
        {
          _id: 'alice/settings',
          userId: 'alice',
          key: 'settings',
          deleted: false,
          json: '{"theme":"light","$weird":{"a.b":1}}',
          revision: 1,
        },
      ],
      keys: [
        // `bytes`: the document's size, for the per-user quota.
        { _id: 'alice/a/b', userId: 'alice', key: 'a/b', deleted: false, revision: 0, bytes: 7 },
        { _id: 'alice/settings', userId: 'alice', key: 'settings', deleted: false, revision: 1, bytes: 36 },
      ],
    });
  });

  it('a deletion leaves a tombstone that an older, replayed write does not bring back', async () => {
    const events = recordedEvents(preferenceStream('alice', 'settings'), [...settingsEvents, deleted('settings')]);
    const { projection, rows } = await project(events);
    const tombstone = { _id: 'alice/settings', userId: 'alice', key: 'settings', deleted: true, revision: 2 };
    expect(await rows('alice')).toEqual({ documents: [{ ...tombstone, json: null }], keys: [{ ...tombstone, bytes: 0 }] });
    await projection.apply(events[1]);
    expect(await rows('alice')).toEqual({ documents: [{ ...tombstone, json: null }], keys: [{ ...tombstone, bytes: 0 }] });
  });

  it('is idempotent: replaying every event, or older ones after newer ones, changes nothing', async () => {
    const events = recordedEvents(preferenceStream('alice', 'settings'), [
      ...settingsEvents,
      deleted('settings'),
      written('settings', { v: 2 }),
    ]);
    const { projection, rows } = await project(events);
    const before = await rows('alice');
    for (const event of [...events, ...[...events].reverse()]) await projection.apply(event);
    expect(await rows('alice')).toEqual(before);
  });

  it('refuses an event of another owner, or of another key, and writes nothing of it', async () => {
    const { projection, rows } = await project([]);
    const stream = preferenceStream('alice', 'settings');
    const [foreignOwner] = recordedEvents({ id: stream.id, owner: { userId: 'mallory', key: 'settings' } }, [
      written('settings', { x: 1 }),
    ]);
    const [otherKey] = recordedEvents(stream, [written('other', { x: 1 })]);
    await expect(projection.apply(foreignOwner)).rejects.toBeInstanceOf(ForeignEventError);
    await expect(projection.apply(otherKey)).rejects.toBeInstanceOf(ForeignEventError);
    expect(await rows('alice')).toEqual({ documents: [], keys: [] });
  });
});
