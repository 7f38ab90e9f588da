import { type HistoryChangesPage, HistoryChangesQuery } from '@udp/contracts';
import { type InternalReads, parseInput } from '@udp/http-kit';
import { toItem } from '../projections/history';
import { type HistoryReadModel, changedEntries } from '../projections/history-queries';
import { formatSyncToken, parseSyncToken, positionAfter } from '../projections/sync-token';

/**
 * What the gateway's live sync pulls (docs/live-sync.md): the caller's entries changed after `since`, each with the
 * position just after it, so a stream gives every event its own cursor and a resume is exactly once. The same
 * selection as `GET /api/history/v2?since=` (listHistory); internal: the gateway answers 404 for /internal. An internal
 * read: its route over HTTP, a call in process for the embedded gateway.
 */
export function historyChanges(model: HistoryReadModel): InternalReads {
  return {
    '/internal/history/changes': async (userId, query) => {
      const { since, limit, reach } = parseInput(HistoryChangesQuery, query, 'query');
      const page = await changedEntries(model, userId, since ?? '0', since === undefined ? 0 : (limit ?? 100), reach);
      const { more } = page;
      const changes = page.entries.map((doc, i) => ({
        item: toItem(doc),
        // The last entry of a complete answer covers up to the head: changes that showed no entry are behind it too.
        position: !more && i === page.entries.length - 1 ? page.sync_token : formatSyncToken(positionAfter(doc.revision, doc.item_id)),
      }));
      // How far back the caller reaches, in the user's events: the gateway sends a resume from too far back no change.
      const behind = since === undefined ? 0 : Math.max(0, page.applied - parseSyncToken(since).count);
      return {
        changes,
        position: page.sync_token,
        applied: parseSyncToken(page.sync_token).count,
        behind,
        more,
      } satisfies HistoryChangesPage;
    },
  };
}
