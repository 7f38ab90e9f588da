import { Router } from 'express';
import { type HistoryChangesPage, HistoryChangesQuery } from '@udp/contracts';
import { parseInput, userIdOf } from '@udp/http-kit';
import { toItem } from '../projections/history';
import { type HistoryReadModel, changedEntries } from '../projections/history-queries';
import { formatSyncToken, parseSyncToken, positionAfter } from '../projections/sync-token';

/**
 * What the gateway's live sync pulls (docs/live-sync.md): the caller's entries changed after `since`, each with the
 * position just after it, so a stream gives every event its own cursor and a resume is exactly once. The same
 * selection as `GET /api/history/v2?since=` (listHistory); internal: the gateway answers 404 for /internal.
 */
export function changesRoute(model: HistoryReadModel): Router {
  const router = Router();
  router.get('/internal/history/changes', async (req, res) => {
    const { since, limit } = parseInput(HistoryChangesQuery, req.query, 'query');
    const page = await changedEntries(model, userIdOf(res), since ?? '0', since === undefined ? 0 : (limit ?? 100));
    const { more } = page;
    const changes = page.entries.map((doc, i) => ({
      item: toItem(doc),
      // The last entry of a complete answer covers up to the head: changes that showed no entry are behind it too.
      position: !more && i === page.entries.length - 1 ? page.sync_token : formatSyncToken(positionAfter(doc.revision, doc.item_id)),
    }));
    const answer: HistoryChangesPage = { changes, position: page.sync_token, applied: parseSyncToken(page.sync_token).count, more };
    res.json(answer);
  });
  return router;
}
