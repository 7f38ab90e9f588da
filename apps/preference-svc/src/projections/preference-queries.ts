import type { Collection } from '@udp/readmodel';
import type { KeySize } from '../domain/quota-decider';
import type { JsonObject } from '../domain/json-document';
import { type PreferenceDocumentRow, type PreferenceKeyRow, preferenceRowId } from './preferences';

/**
 * The user's live keys, ascending (byte by byte in UTF-8, as the stores compare text). Sorted here: a store that seals
 * keeps the keys hashed, in an order of their own (a user's keys are few: PREFERENCE_LIMITS).
 */
export async function listKeys(keys: Collection<PreferenceKeyRow>, userId: string): Promise<string[]> {
  const rows = await keys.find({ userId, deleted: false });
  return rows.map((r) => r.key).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** The stored document, or null when the user has none under this key. */
export async function readDocument(documents: Collection<PreferenceDocumentRow>, userId: string, key: string): Promise<JsonObject | null> {
  const row = await documents.get(preferenceRowId(userId, key));
  return row && !row.deleted && row.json !== null ? (JSON.parse(row.json) as JsonObject) : null;
}

/**
 * The size of each of the user's keys as the read model knows it (0: deleted), at its stream's revision: what the
 * quota stream counts a key as, unless a newer claim is open (quota-decider.ts). A row projected before rows carried
 * their size is measured from its document.
 */
export async function keySizes(
  keys: Collection<PreferenceKeyRow>,
  documents: Collection<PreferenceDocumentRow>,
  userId: string,
): Promise<KeySize[]> {
  const sizes: KeySize[] = [];
  for (const row of await keys.find({ userId })) {
    const bytes = row.deleted ? 0 : (row.bytes ?? Buffer.byteLength((await documents.get(row._id))?.json ?? ''));
    sizes.push({ key: row.key, revision: row.revision, bytes });
  }
  return sizes;
}
