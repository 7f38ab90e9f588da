import type { Collection } from '@udp/readmodel';
import type { OtherKeysUsage } from '../domain/decider';
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

/**
 * What the user stores under keys other than `key`: their number and bytes, for the per-user quotas. A row
 * projected before rows carried their size is measured from its document.
 */
export async function otherKeysUsage(
  keys: Collection<PreferenceKeyRow>,
  documents: Collection<PreferenceDocumentRow>,
  userId: string,
  key: string,
): Promise<OtherKeysUsage> {
  const rows = (await keys.find({ userId, deleted: false })).filter((row) => row.key !== key);
  let bytes = 0;
  for (const row of rows) {
    if (row.bytes !== undefined) bytes += row.bytes;
    else bytes += Buffer.byteLength((await documents.get(row._id))?.json ?? '');
  }
  return { keys: rows.length, bytes };
}
