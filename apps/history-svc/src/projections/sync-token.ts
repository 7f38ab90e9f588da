/**
 * A position in a user's change order, as clients see it: the `sync_token` of history answers and the
 * `since` parameter. Every change to an entry is an event of the user's stream, and the entry remembers the
 * revision of its last one, so "changed after position p" is "revision at or past p" whatever `date` the
 * client sent. One event can change many entries (delete-all), so a position inside such a group also names
 * the last item id given out of it (entries of one revision are given in item id order).
 *
 * Written `<count>` (every change with a revision below `count` is covered; `0` is the beginning) or
 * `<revision>.<base64url(item id)>` (also the entries of that revision up to that item id). Clients treat it
 * as opaque.
 */
export interface SyncPosition {
  /** Changes with a revision below this are covered. */
  count: number;
  /** Also covered: the entries changed at revision `count` with an item id up to this one. */
  afterItemId?: string;
}

export const BEGINNING: SyncPosition = { count: 0 };

export function formatSyncToken(position: SyncPosition): string {
  return position.afterItemId === undefined
    ? String(position.count)
    : `${position.count}.${Buffer.from(position.afterItemId, 'utf8').toString('base64url')}`;
}

/** Parses a token the contracts schema already checked for shape (`SYNC_TOKEN_PATTERN`). */
export function parseSyncToken(token: string): SyncPosition {
  const dot = token.indexOf('.');
  if (dot === -1) return { count: Number(token) };
  return { count: Number(token.slice(0, dot)), afterItemId: Buffer.from(token.slice(dot + 1), 'base64url').toString('utf8') };
}

/** The position just after an entry changed at `revision`, when more entries of the same query follow it. */
export const positionAfter = (revision: number, itemId: string): SyncPosition => ({ count: revision, afterItemId: itemId });
