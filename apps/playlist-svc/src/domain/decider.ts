import { type BookmarkFields, type PlaylistFields, WATCH_LATER, WATCH_LATER_DEFAULT_NAME } from '@udp/contracts';
import { type Command, type Decider, conflict, copyOnWrite, limitExceeded, notFound, quotaExceeded } from '@udp/eventsourcing';
import type { BookmarkAdded, PlaylistCreated, PlaylistEvent } from './aggregate';

/** The configured limits (PLAYLIST_MAX_PLAYLISTS, PLAYLIST_MAX_BOOKMARKS). */
export interface PlaylistLimits {
  /** Standard playlists per user; the watch-later playlist does not count. */
  maxPlaylists: number;
  /** Bookmarks per playlist, watch later included. */
  maxBookmarks: number;
}

/** v2 addresses a playlist by its technical id, v3 by its business id. */
export type PlaylistRef = { id: string } | { businessId: string };

/** An item to bookmark; `date` is the client's, used only when earlier than the server time. */
export interface ItemToAdd {
  itemId: string;
  date?: number;
}

/**
 * Creates the standard playlist `businessId` (technical id `newPlaylistId`, chosen by the caller) or, when one
 * exists with that business id, gives it `name`; then adds `items` to it.
 */
export type SavePlaylist = Command<'SavePlaylist', { businessId: string; newPlaylistId: string; name: string; items: ItemToAdd[] }>;
/** Makes sure the watch-later playlist exists (it is created on the first write of any kind). */
export type EnsureWatchLater = Command<'EnsureWatchLater', Record<string, never>>;
export type AddBookmarks = Command<'AddBookmarks', { playlist: PlaylistRef; items: ItemToAdd[] }>;
/** Removes one bookmark by technical id; an unknown id is refused. */
export type RemoveBookmark = Command<'RemoveBookmark', { playlist: PlaylistRef; bookmarkId: number }>;
/** Removes every bookmark, or (when ids or item ids are given) those matching either; unknown ones are ignored. */
export type RemoveBookmarks = Command<'RemoveBookmarks', { playlist: PlaylistRef; bookmarkIds?: number[]; itemIds?: string[] }>;
export type DeletePlaylist = Command<'DeletePlaylist', { playlist: PlaylistRef }>;
/** Deletes every standard playlist; watch later stays, with its content. */
export type DeleteAllPlaylists = Command<'DeleteAllPlaylists', Record<string, never>>;
export type PlaylistCommand =
  SavePlaylist | EnsureWatchLater | AddBookmarks | RemoveBookmark | RemoveBookmarks | DeletePlaylist | DeleteAllPlaylists;

/** A bookmark: its fields are declared once, in libs/contracts/src/playlists.ts (the state, snapshot, documents, answers). */
export type Bookmark = BookmarkFields;

/** A playlist: its fields, declared once in libs/contracts/src/playlists.ts, and its bookmarks. */
export interface Playlist extends PlaylistFields {
  /** One bookmark per item, by item id, in the order they were added. */
  bookmarks: ReadonlyMap<string, Bookmark>;
}

export interface PlaylistsState {
  /** By technical id, in creation order. */
  playlists: ReadonlyMap<string, Playlist>;
  /** The per-user bookmark sequence: the highest id ever given, removed bookmarks included. */
  lastBookmarkId: number;
}

const INT32_MAX = 2_147_483_647;

/** A client date counts only when it is earlier than the server time. */
export const bookmarkDate = (clientDate: number | undefined, now: number) =>
  clientDate !== undefined && clientDate < now ? clientDate : now;

export function findPlaylist(state: PlaylistsState, ref: PlaylistRef): Playlist | undefined {
  if ('id' in ref) return state.playlists.get(ref.id);
  for (const playlist of state.playlists.values()) if (playlist.businessId === ref.businessId) return playlist;
  return undefined;
}

const describe = (ref: PlaylistRef) => ('id' in ref ? `no playlist with id ${ref.id}` : `no playlist with business id ${ref.businessId}`);

/** The playlists decider, given the configured limits. */
export function playlistsDecider(limits: PlaylistLimits): Decider<PlaylistCommand, PlaylistEvent, PlaylistsState> {
  const existing = (state: PlaylistsState, ref: PlaylistRef): Playlist => {
    const playlist = findPlaylist(state, ref);
    if (!playlist) throw notFound(describe(ref));
    return playlist;
  };

  /** One bookmark per item: items already there (or twice in `items`) add nothing. All or none. */
  const added = (playlist: Playlist, items: ItemToAdd[], lastBookmarkId: number, now: number): BookmarkAdded[] => {
    const present = new Set(playlist.bookmarks.keys());
    const events: BookmarkAdded[] = [];
    let id = lastBookmarkId;
    for (const { itemId, date } of items) {
      if (present.has(itemId)) continue;
      present.add(itemId);
      events.push({
        type: 'BookmarkAdded',
        data: { playlistId: playlist.id, bookmarkId: ++id, itemId, date: bookmarkDate(date, now), addedAt: now },
      });
    }
    if (events.length && present.size > limits.maxBookmarks) {
      throw quotaExceeded(
        `a playlist holds at most ${limits.maxBookmarks} bookmarks (PLAYLIST_MAX_BOOKMARKS); "${playlist.businessId}" has ${playlist.bookmarks.size} and this adds ${events.length}`,
        'PLAYLIST_MAX_BOOKMARKS',
        limits.maxBookmarks,
      );
    }
    if (id > INT32_MAX) throw limitExceeded('this user has used up the bookmark ids (int32)');
    return events;
  };

  function savePlaylist({ data, metadata }: SavePlaylist, state: PlaylistsState): PlaylistEvent[] {
    const { businessId, newPlaylistId, name, items } = data;
    const found = findPlaylist(state, { businessId });
    const events: PlaylistEvent[] = [];
    if (found) {
      if (found.name !== name) events.push({ type: 'PlaylistRenamed', data: { playlistId: found.id, name, date: metadata.now } });
    } else {
      if (state.playlists.has(newPlaylistId)) throw conflict(`playlist id ${newPlaylistId} is taken`);
      const standard = [...state.playlists.values()].filter((p) => p.type === 'standard').length;
      if (standard >= limits.maxPlaylists) {
        throw quotaExceeded(
          `a user has at most ${limits.maxPlaylists} playlists besides watch later (PLAYLIST_MAX_PLAYLISTS)`,
          'PLAYLIST_MAX_PLAYLISTS',
          limits.maxPlaylists,
        );
      }
      events.push({
        type: 'PlaylistCreated',
        data: { playlistId: newPlaylistId, businessId, name, playlistType: 'standard', date: metadata.now },
      });
    }
    const after = evolveAll(state, events);
    return [...events, ...added(findPlaylist(after, { businessId })!, items, state.lastBookmarkId, metadata.now)];
  }

  function addBookmarks({ data, metadata }: AddBookmarks, state: PlaylistsState): PlaylistEvent[] {
    return added(existing(state, data.playlist), data.items, state.lastBookmarkId, metadata.now);
  }

  function removeBookmark({ data, metadata }: RemoveBookmark, state: PlaylistsState): PlaylistEvent[] {
    const playlist = existing(state, data.playlist);
    if (![...playlist.bookmarks.values()].some((b) => b.id === data.bookmarkId)) {
      throw notFound(`no bookmark ${data.bookmarkId} in playlist ${playlist.businessId}`);
    }
    return [{ type: 'BookmarksRemoved', data: { playlistId: playlist.id, bookmarkIds: [data.bookmarkId], date: metadata.now } }];
  }

  function removeBookmarks({ data, metadata }: RemoveBookmarks, state: PlaylistsState): PlaylistEvent[] {
    const playlist = existing(state, data.playlist);
    const everything = data.bookmarkIds === undefined && data.itemIds === undefined;
    const ids = new Set(data.bookmarkIds ?? []);
    const itemIds = new Set(data.itemIds ?? []);
    const bookmarkIds = [...playlist.bookmarks.values()]
      .filter((b) => everything || ids.has(b.id) || itemIds.has(b.itemId))
      .map((b) => b.id);
    return bookmarkIds.length ? [{ type: 'BookmarksRemoved', data: { playlistId: playlist.id, bookmarkIds, date: metadata.now } }] : [];
  }

  function deletePlaylist({ data, metadata }: DeletePlaylist, state: PlaylistsState): PlaylistEvent[] {
    const playlist = existing(state, data.playlist);
    if (playlist.type === 'watch_later') {
      throw conflict('the watch-later playlist cannot be deleted; empty it with DELETE .../bookmarks instead');
    }
    return [{ type: 'PlaylistDeleted', data: { playlistId: playlist.id, date: metadata.now } }];
  }

  function deleteAll({ metadata }: DeleteAllPlaylists, state: PlaylistsState): PlaylistEvent[] {
    return [...state.playlists.values()]
      .filter((p) => p.type === 'standard')
      .map((p): PlaylistEvent => ({ type: 'PlaylistDeleted', data: { playlistId: p.id, date: metadata.now } }));
  }

  function decideOn(command: PlaylistCommand, state: PlaylistsState): PlaylistEvent[] {
    switch (command.type) {
      case 'SavePlaylist':
        return savePlaylist(command, state);
      case 'EnsureWatchLater':
        return [];
      case 'AddBookmarks':
        return addBookmarks(command, state);
      case 'RemoveBookmark':
        return removeBookmark(command, state);
      case 'RemoveBookmarks':
        return removeBookmarks(command, state);
      case 'DeletePlaylist':
        return deletePlaylist(command, state);
      case 'DeleteAllPlaylists':
        return deleteAll(command, state);
    }
  }

  /**
   * Watch later exists for every user from the first use: the first write that changes anything (or an
   * explicit EnsureWatchLater) creates it, and every command is decided as if it existed.
   */
  function decide(command: PlaylistCommand, state: PlaylistsState): PlaylistEvent[] {
    const opening: PlaylistEvent[] = state.playlists.has(WATCH_LATER) ? [] : [watchLaterCreated(command.metadata.now)];
    const events = decideOn(command, opening.length ? evolveAll(state, opening) : state);
    return events.length || command.type === 'EnsureWatchLater' ? [...opening, ...events] : [];
  }

  return { decide, evolve, initialState, fold };
}

/** The event that creates the watch-later playlist (the first write of a user's playlists records it). */
export function watchLaterCreated(now: number): PlaylistCreated {
  return {
    type: 'PlaylistCreated',
    data: { playlistId: WATCH_LATER, businessId: WATCH_LATER, name: WATCH_LATER_DEFAULT_NAME, playlistType: 'watch_later', date: now },
  };
}

/** A new playlist's fields, as its creation sets them: the state's and the read model's document's (projections/playlists.ts). */
export function createdPlaylist({ playlistId, businessId, name, playlistType, date }: PlaylistCreated['data']): PlaylistFields {
  return { id: playlistId, businessId, name, type: playlistType, created: date, lastUpdate: date };
}

export function initialState(): PlaylistsState {
  return { playlists: new Map(), lastBookmarkId: 0 };
}

interface MutablePlaylist extends Omit<Playlist, 'bookmarks'> {
  bookmarks: Map<string, Bookmark>;
}
interface MutableState {
  playlists: Map<string, MutablePlaylist>;
  lastBookmarkId: number;
}

/** A copy the caller may change: maps and playlists are new, bookmarks (never changed in place) shared. */
function copy(state: PlaylistsState): MutableState {
  const playlists = new Map<string, MutablePlaylist>();
  for (const [id, p] of state.playlists) playlists.set(id, { ...p, bookmarks: new Map(p.bookmarks) });
  return { playlists, lastBookmarkId: state.lastBookmarkId };
}

function apply(state: MutableState, event: PlaylistEvent): void {
  switch (event.type) {
    case 'PlaylistCreated':
      state.playlists.set(event.data.playlistId, { ...createdPlaylist(event.data), bookmarks: new Map() });
      return;
    case 'PlaylistRenamed': {
      const playlist = state.playlists.get(event.data.playlistId);
      if (playlist) Object.assign(playlist, { name: event.data.name, lastUpdate: event.data.date });
      return;
    }
    case 'PlaylistDeleted':
      state.playlists.delete(event.data.playlistId);
      return;
    case 'BookmarkAdded': {
      const { playlistId, bookmarkId, itemId, date, addedAt } = event.data;
      state.lastBookmarkId = Math.max(state.lastBookmarkId, bookmarkId);
      const playlist = state.playlists.get(playlistId);
      if (!playlist) return;
      playlist.bookmarks.set(itemId, { id: bookmarkId, itemId, date });
      playlist.lastUpdate = addedAt;
      return;
    }
    case 'BookmarksRemoved': {
      const playlist = state.playlists.get(event.data.playlistId);
      if (!playlist) return;
      const ids = new Set(event.data.bookmarkIds);
      for (const [itemId, bookmark] of playlist.bookmarks) if (ids.has(bookmark.id)) playlist.bookmarks.delete(itemId);
      playlist.lastUpdate = event.data.date;
      return;
    }
  }
}

export const { evolve, fold } = copyOnWrite(copy, apply);

/** The state after `events` (a decision's own events applied to the state it was taken on). */
export function evolveAll(state: PlaylistsState, events: readonly PlaylistEvent[]): PlaylistsState {
  return fold(events, state);
}
