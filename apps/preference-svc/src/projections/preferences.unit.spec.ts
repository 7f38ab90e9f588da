import { ForeignEventError } from '@udp/eventsourcing';
import { projectionSpecification } from '@udp/test-system';
import { type PreferenceEvent, preferenceStream } from '../domain/aggregate';
import { PREFERENCE_DOCUMENTS, PREFERENCE_KEYS, changedAt, preferenceProjection } from './preferences';

/** preference_documents and preference_keys: given events, the rows; a replayed event changes nothing. */
const spec = projectionSpecification(preferenceProjection);
const written = (key: string, document: Record<string, unknown>): PreferenceEvent => ({
  type: 'PreferenceWritten',
  data: { key, document, operation: { kind: 'replace' } },
});
const deleted = (key: string): PreferenceEvent => ({ type: 'PreferenceDeleted', data: { key } });

const settingsEvents = [written('settings', { theme: 'dark' }), written('settings', { theme: 'light', $weird: { 'a.b': 1 } })];
const givenTwoKeys = () =>
  spec.given(preferenceStream('alice', 'settings'), settingsEvents).and(preferenceStream('alice', 'a/b'), [written('a/b', { x: 1 })]);
const tombstone = { _id: 'alice/settings', userId: 'alice', key: 'settings', deleted: true, revision: 2 };

describe('preferences projection', () => {
  it('keeps the latest document as JSON text, by (user, key)', () =>
    givenTwoKeys().then(PREFERENCE_DOCUMENTS, [
      { _id: 'alice/a/b', userId: 'alice', key: 'a/b', deleted: false, json: '{"x":1}', revision: 0 },
      {
        _id: 'alice/settings',
        userId: 'alice',
        key: 'settings',
        deleted: false,
        json: '{"theme":"light","$weird":{"a.b":1}}',
        revision: 1,
      },
    ]));

  it("keeps each key with its document's size (the per-user quota) and its last change's store position (live sync)", () =>
    givenTwoKeys().then(PREFERENCE_KEYS, [
      { _id: 'alice/a/b', userId: 'alice', key: 'a/b', deleted: false, revision: 0, bytes: 7, changed: changedAt(3n) },
      { _id: 'alice/settings', userId: 'alice', key: 'settings', deleted: false, revision: 1, bytes: 36, changed: changedAt(2n) },
    ]));

  it('a deletion leaves a tombstone of the document', () =>
    spec
      .given(preferenceStream('alice', 'settings'), [...settingsEvents, deleted('settings')])
      .then(PREFERENCE_DOCUMENTS, [{ ...tombstone, json: null }]));

  it('a deletion leaves a tombstone of the key, of no size', () =>
    spec
      .given(preferenceStream('alice', 'settings'), [...settingsEvents, deleted('settings')])
      .then(PREFERENCE_KEYS, [{ ...tombstone, bytes: 0, changed: changedAt(3n) }]));

  it('is idempotent: replaying every event, or older ones after newer ones (a write before its deletion), changes nothing', () =>
    spec
      .given(preferenceStream('alice', 'settings'), [...settingsEvents, deleted('settings'), written('settings', { v: 2 })])
      .thenReplayingChangesNothing());

  it('refuses an event of another owner and writes nothing of it', () =>
    spec
      .given({ id: preferenceStream('alice', 'settings').id, owner: { userId: 'mallory', key: 'settings' } }, [
        written('settings', { x: 1 }),
      ])
      .thenRefuses(ForeignEventError));

  it('refuses an event of another key in the stream of a key and writes nothing of it', () =>
    spec.given(preferenceStream('alice', 'settings'), [written('other', { x: 1 })]).thenRefuses(ForeignEventError));
});
