import { type PreferenceChange, type PreferenceChangesPage, PREFERENCE_CHANGES_MAX_PAGE, PreferenceChangesQuery } from '@udp/contracts';
import { type InternalReads, parseInput } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import { type PreferenceDocumentRow, type PreferenceKeyRow, changedAt } from '../projections/preferences';

/** The position after a row's last change (store position + 1), in decimal. */
const after = (changed: string) => (BigInt(changed) + 1n).toString();
const max = (a: string, b: string) => (BigInt(a) >= BigInt(b) ? a : b);

/**
 * What the gateway's live sync pulls (docs/live-sync.md): the caller's keys changed at or after `since`, a store
 * position, oldest change first, at most `limit`. Each key row keeps the store position of its last change (deleted
 * keys as tombstones), and a user's rows are applied in store order (preferences.ts), so "changed at or after p" is a
 * selection of the rows and the position after each is its own: a resume from it is exactly once. Store positions
 * only grow, so a cursor of before an erasure selects nothing of the erased rows. Internal: the gateway answers 404
 * for /internal. An internal read: its route over HTTP, a call in process for the embedded gateway.
 */
export function preferenceChanges(keys: Collection<PreferenceKeyRow>, documents: Collection<PreferenceDocumentRow>): InternalReads {
  return {
    '/internal/preference/changes': async (userId, query) => {
      const { since, limit = PREFERENCE_CHANGES_MAX_PAGE } = parseInput(PreferenceChangesQuery, query, 'query');
      // The head first: a change stored after it is in the page below, never skipped by a position taken after the page.
      const [last] = await keys.find({ userId, changed: { $gte: changedAt(0n) } }, { sort: { changed: -1 }, limit: 1, readOnly: true });
      const head = last ? after(last.changed!) : '0';
      if (since === undefined) return { changes: [], position: head, applied: head, more: false } satisfies PreferenceChangesPage;
      const rows = await keys.find(
        { userId, changed: { $gte: changedAt(BigInt(since)) } },
        { sort: { changed: 1 }, limit: limit + 1, readOnly: true },
      );
      const more = rows.length > limit;
      const page = rows.slice(0, limit);
      const live = page.filter((row) => !row.deleted).map((row) => row._id);
      const stored = new Map(
        live.length === 0 ? [] : (await documents.find({ userId, _id: { $in: live } }, { readOnly: true })).map((doc) => [doc._id, doc]),
      );
      const changes = page.map((row) => ({ preference: preferenceChange(row, stored.get(row._id)), position: after(row.changed!) }));
      const reached = changes.length === 0 ? head : max(head, changes.at(-1)!.position);
      const answer: PreferenceChangesPage = {
        changes,
        // A complete answer covers the user's head, and never moves a stream back.
        position: more ? changes.at(-1)!.position : max(since, reached),
        applied: reached,
        more,
      };
      return answer;
    },
  };
}

/**
 * The key as `GET /api/preference/{key}` shows it. The document row is written just before the key row: it may
 * already show a later change (then sent again with that change's own position), never an earlier one.
 */
function preferenceChange(row: PreferenceKeyRow, doc: PreferenceDocumentRow | undefined): PreferenceChange {
  if (row.deleted || !doc || doc.deleted || doc.json === null) return { key: row.key, deleted: true };
  return { key: row.key, document: JSON.parse(doc.json) as Record<string, unknown>, deleted: false };
}
