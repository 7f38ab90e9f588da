import { STREAMS_OF_EVERY_AGGREGATE, qcItem } from './whole-system';

/**
 * Every stored event is read through its aggregate's schema (the command handler's fold, every projection). Each
 * version of each event that exists (all are version 1) parses to itself; an event its schema does not describe is
 * refused rather than folded half-read; fields an event does not have are dropped (a later version may add some).
 */
const profile = {
  publicUserId: '0b6f3a52-2a4e-4c1f-9a53-1d6f0f0c1a11',
  displayName: 'Ann',
  firstName: null,
  lastName: null,
  language: 'en',
  avatarUrl: null,
  public: false,
  publicFields: [],
  createdAt: 1,
  updatedAt: 2,
};
const EVENTS_BY_CATEGORY: Record<string, Array<{ type: string; data: Record<string, unknown> }>> = {
  'history-': [
    { type: 'HistoryItemRecorded', data: { itemId: 'urn:a', id: 1, date: 10, deleted: false, deviceId: 'tv', lastPlaybackPosition: 1.5 } },
    { type: 'HistoryItemDeleted', data: { itemId: 'urn:a', id: 1, date: 11 } },
    { type: 'HistoryCleared', data: { date: 12, itemIds: ['urn:a'] } },
  ],
  'playlists-': [
    { type: 'PlaylistCreated', data: { playlistId: 'p', businessId: 'jazz', name: 'Jazz', playlistType: 'standard', date: 1 } },
    { type: 'PlaylistRenamed', data: { playlistId: 'p', name: 'Jazz!', date: 2 } },
    { type: 'BookmarkAdded', data: { playlistId: 'p', bookmarkId: 1, itemId: 'urn:a', date: 3, addedAt: 3 } },
    { type: 'BookmarksRemoved', data: { playlistId: 'p', bookmarkIds: [1], date: 4 } },
    { type: 'PlaylistDeleted', data: { playlistId: 'p', date: 5 } },
  ],
  'preference.v2-': [
    { type: 'PreferenceWritten', data: { key: 'settings', document: { theme: 'dark' }, operation: { kind: 'putPath', path: ['theme'] } } },
    { type: 'PreferenceDeleted', data: { key: 'settings' } },
  ],
  'preference-quota-': [
    {
      type: 'PreferenceQuotaClaimed',
      data: { key: 'settings', revision: 3, bytes: 120, before: { revision: 2, bytes: 80 }, claimedAt: 1 },
    },
  ],
  'profile-': [
    { type: 'ProfileCreated', data: { profile } },
    { type: 'ProfileUpdated', data: { profile: { ...profile, displayName: 'Anna' }, changedFields: ['displayName'] } },
  ],
  'qc-item-': [{ type: 'ItemVersionPublished', data: { item: qcItem(), publishedAt: 1 } }],
  'exports-': [
    { type: 'ExportRequested', data: { key: 'k', fileName: 'f.zip', callbackUrl: 'https://example.org/cb', requestedAt: 1, expiresAt: 9 } },
    { type: 'ExportAttemptStarted', data: { key: 'k', storageId: 's', startedAt: 2 } },
    { type: 'ExportCompleted', data: { key: 'k', storageId: 's', size: 1, sha256: 'h', expiresAt: 9, completedAt: 3 } },
    { type: 'ExportFailed', data: { key: 'k', reason: 'no data', failedAt: 3 } },
    { type: 'ExportCallbackAttempted', data: { key: 'k', delivered: false, attempts: 6, error: 'timeout', at: 4 } },
    { type: 'ExportDeleted', data: { key: 'k', reason: 'expired', at: 9 } },
  ],
  'erasure-': [
    { type: 'ErasureRequested', data: { erasureId: 'e', userHash: 'h', participants: ['a'], requestedAt: 1 } },
    { type: 'ErasureParticipantConfirmed', data: { service: 'a', streamsDeleted: 1, documentsDeleted: 2, confirmedAt: 2 } },
    { type: 'ErasureCompleted', data: { completedAt: 3 } },
  ],
};
const readable = STREAMS_OF_EVERY_AGGREGATE.flatMap((streams) => ('events' in streams ? [streams] : []));

describe.each(readable.map((streams) => [streams.category, streams] as const))('stored events of %s streams', (category, streams) => {
  const events = EVENTS_BY_CATEGORY[category];

  it('has a sample of every event type its schema knows', () => {
    const known = streams.events.options.map((option) => option.shape.type.value);
    expect(events.map((event) => event.type).sort()).toEqual([...known].sort());
  });

  it.each(events.map((event) => [event.type, event] as const))('reads %s (version 1) as it was written', (_type, event) => {
    expect(streams.events.parse(structuredClone(event))).toEqual(event);
  });

  it.each(events.map((event) => [event.type, event] as const))('refuses %s without its fields', (_type, event) => {
    expect(() => streams.events.parse({ type: event.type, data: {} })).toThrow();
  });

  it('refuses an event type it does not know', () => {
    expect(() => streams.events.parse({ type: 'SomethingElse', data: events[0].data })).toThrow();
  });

  it('drops a field an event does not have', () => {
    const [event] = events;
    expect(streams.events.parse({ ...event, data: { ...event.data, addedLater: true } })).toEqual(event);
  });
});

it('keeps a preference field named __proto__ when a stored document is read (a preference may hold any field name)', () => {
  const preference = STREAMS_OF_EVERY_AGGREGATE.find((streams) => streams.category === 'preference.v2-');
  const document = JSON.parse('{"__proto__":{"x":1},"theme":"dark"}') as Record<string, unknown>;
  const stored = { type: 'PreferenceWritten', data: { key: 'k', document, operation: { kind: 'replace' } } };
  const read = preference && 'events' in preference ? preference.events.parse(stored) : undefined;
  expect(read?.type === 'PreferenceWritten' && JSON.stringify(read.data.document)).toBe('{"__proto__":{"x":1},"theme":"dark"}');
});
