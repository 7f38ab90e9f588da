import type { Collection } from '@udp/readmodel';
import type { JsonObject } from '../domain/json-document';
import { type PreferenceDocumentRow, type PreferenceKeyRow, preferenceRowId } from './preferences';

/** The user's live keys, ascending. */
export async function listKeys(keys: Collection<PreferenceKeyRow>, userId: string): Promise<string[]> {
  const rows = await keys.find({ userId, deleted: false }, { sort: { key: 1 } });
  return rows.map((r) => r.key);
}

/** The stored document, or null when the user has none under this key. */
export async function readDocument(documents: Collection<PreferenceDocumentRow>, userId: string, key: string): Promise<JsonObject | null> {
  const row = await documents.get(preferenceRowId(userId, key));
  return row && !row.deleted && row.json !== null ? (JSON.parse(row.json) as JsonObject) : null;
}
