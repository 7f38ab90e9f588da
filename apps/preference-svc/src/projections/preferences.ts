import type { EventStore } from '@udp/eventstore';
import { type Projection, ForeignEventError, aggregateProjection, userOfScopedId, userScopedId } from '@udp/eventsourcing';
import type { Collection, ReadModelStore, Sealing } from '@udp/readmodel';
import { preferenceStreamPrefixOf, preferenceStreams } from '../domain/aggregate';

/**
 * One document per (user, key). The content is kept as JSON text: a preference may hold any field name
 * (`$`-prefixed, dotted...), which a document database would refuse or misread as an operator.
 * A deletion leaves a tombstone, so a replayed older write cannot bring the document back.
 */
export interface PreferenceDocumentRow {
  _id: string;
  userId: string;
  key: string;
  deleted: boolean;
  json: string | null;
  revision: number;
}

/** The user's keys (small rows, so listing keys never loads the documents). */
export interface PreferenceKeyRow {
  _id: string;
  userId: string;
  key: string;
  deleted: boolean;
  revision: number;
  /** Bytes of the document's JSON text (UTF-8), for the per-user quota; absent in rows projected before it. */
  bytes?: number;
  /**
   * The store position of the key's last change, in 40 decimal digits (so that text order is number order): the order
   * of the user's preference changes for live sync (`/internal/preference/changes`). Rows projected before it get
   * the zero position at start (`positionKeysOfEarlierModels`): changed before any live-sync cursor was issued.
   */
  changed?: string;
}

export const PREFERENCE_DOCUMENTS = 'preference_documents';
export const PREFERENCE_KEYS = 'preference_keys';
/**
 * How a store that seals (PostgreSQL) keeps a user's documents and keys (docs/erasure.md): the fields their queries
 * name, the key (the client's own name) hashed with the user's key.
 */
export const PREFERENCE_SEALING: Sealing = {
  ownerField: 'userId',
  ownerOfId: userOfScopedId,
  fields: { userId: 'owner', key: 'owner', deleted: 'plain', revision: 'plain', changed: 'plain' },
};

/** A store position as `changed` holds it. */
export const changedAt = (position: bigint) => position.toString().padStart(40, '0');

/** `<userId>/<key>` with the user part encoded (no `/` in it), so unambiguous for any user id and key. */
export const preferenceRowId = (userId: string, key: string) => userScopedId(userId, key);

/** Every read-model document of a user (erasure deletes them). */
export const preferenceDocumentsOfUser = (userId: string) => [
  { collection: PREFERENCE_DOCUMENTS, filter: { userId } },
  { collection: PREFERENCE_KEYS, filter: { userId } },
];

/** Every stream of a user: the streams under the user's own prefix, which no other user's name can start with. */
export const preferenceStreamsOfUser =
  (store: EventStore) =>
  (userId: string): Promise<string[]> =>
    store.listStreams(preferenceStreamPrefixOf(userId));

export function preferenceDocuments(readModels: ReadModelStore): Collection<PreferenceDocumentRow> {
  return readModels.collection<PreferenceDocumentRow>(PREFERENCE_DOCUMENTS);
}

export function preferenceKeys(readModels: ReadModelStore): Collection<PreferenceKeyRow> {
  return readModels.collection<PreferenceKeyRow>(PREFERENCE_KEYS);
}

/**
 * Keeps both read models up to date. Events carry the whole resulting document, so each update is a
 * plain upsert conditional on the stream revision: replaying or duplicating an event changes nothing.
 */
export function preferenceProjection(readModels: ReadModelStore): Projection {
  const documents = preferenceDocuments(readModels);
  const keys = preferenceKeys(readModels);
  const projection = aggregateProjection({
    name: 'preference-documents',
    aggregate: preferenceStreams,
    async apply(event, { id: { userId, key }, streamId, revision, position }) {
      if (event.data.key !== key) throw new ForeignEventError(streamId, revision);
      const _id = preferenceRowId(userId, key);
      const deleted = event.type === 'PreferenceDeleted';
      const json = event.type === 'PreferenceWritten' ? JSON.stringify(event.data.document) : null;
      await documents.upsertIfNewer({ _id, userId, key, deleted, json, revision });
      const bytes = json === null ? 0 : Buffer.byteLength(json);
      await keys.upsertIfNewer({ _id, userId, key, deleted, revision, bytes, changed: changedAt(position) });
    },
  });
  // A user's keys are applied in store order (inline: one append of the user's at a time; distributed: by segment,
  // which is by user), so that live sync, reading them by `changed`, never sees a change after a later one.
  return { ...projection, orderKey: (streamId) => preferenceStreamPrefixOf(preferenceStreams.idOf(streamId).userId) };
}

/**
 * Rows projected before rows carried `changed` get the zero position: they changed before this version, so before
 * any cursor that holds a preference position (a cursor of before it reads preferences from the beginning).
 */
export async function positionKeysOfEarlierModels(keys: Collection<PreferenceKeyRow>): Promise<number> {
  return keys.updateMany({ changed: null }, { changed: changedAt(0n) });
}
