import { DomainError } from '@udp/eventsourcing';
import { DeciderSpecification } from '@udp/test-kit';
import { type PlaylistCommand, bookmarkDate, evolve, fold, initialState, playlistsDecider } from './decider';
import { playlistsSnapshot } from './snapshot';
import type { PlaylistEvent } from './aggregate';

const decider = playlistsDecider({ maxPlaylists: 2, maxBookmarks: 3 });
const spec = DeciderSpecification(decider);
const now = 1_700_000_100_000;
const at = (command: Omit<PlaylistCommand, 'metadata'>) => ({ ...command, metadata: { now } }) as PlaylistCommand;
const kind = (expected: DomainError['kind']) => (error: unknown) => error instanceof DomainError && error.kind === expected;

const watchLater = (date = 1): PlaylistEvent => ({
  type: 'PlaylistCreated',
  data: { playlistId: 'watch_later', businessId: 'watch_later', name: 'Watch later', playlistType: 'watch_later', date },
});
const created = (playlistId: string, businessId = playlistId, name = `list ${businessId}`, date = 2): PlaylistEvent => ({
  type: 'PlaylistCreated',
  data: { playlistId, businessId, name, playlistType: 'standard', date },
});
const added = (playlistId: string, bookmarkId: number, itemId: string, date = now, addedAt = now): PlaylistEvent => ({
  type: 'BookmarkAdded',
  data: { playlistId, bookmarkId, itemId, date, addedAt },
});
const removed = (playlistId: string, bookmarkIds: number[], date = now): PlaylistEvent => ({
  type: 'BookmarksRemoved',
  data: { playlistId, bookmarkIds, date },
});
const deleted = (playlistId: string, date = now): PlaylistEvent => ({ type: 'PlaylistDeleted', data: { playlistId, date } });

describe('playlists decider', () => {
  describe('when the user has never written (no watch later yet)', () => {
    it('creates watch later with the first write, before the change', () =>
      spec
        .given([])
        .when(at({ type: 'SavePlaylist', data: { businessId: 'p1', newPlaylistId: 'p1', name: 'Jazz', items: [] } }))
        .then([watchLater(now), created('p1', 'p1', 'Jazz', now)]));

    it('creates watch later on request, even when nothing else changes', () =>
      spec
        .given([])
        .when(at({ type: 'EnsureWatchLater', data: {} }))
        .then([watchLater(now)]));

    it('adds to watch later although it was never created', () =>
      spec
        .given([])
        .when(at({ type: 'AddBookmarks', data: { playlist: { businessId: 'watch_later' }, items: [{ itemId: 'urn:a' }] } }))
        .then([watchLater(now), added('watch_later', 1, 'urn:a')]));

    it('writes nothing when the command changes nothing', () => {
      spec
        .given([])
        .when(at({ type: 'DeleteAllPlaylists', data: {} }))
        .thenNothingHappens();
      spec
        .given([])
        .when(at({ type: 'RemoveBookmarks', data: { playlist: { id: 'watch_later' } } }))
        .thenNothingHappens();
    });

    it('refuses an unknown playlist by id or by business id', () => {
      spec
        .given([])
        .when(at({ type: 'AddBookmarks', data: { playlist: { id: 'nope' }, items: [{ itemId: 'a' }] } }))
        .thenThrows(kind('NotFound'));
      spec
        .given([])
        .when(at({ type: 'DeletePlaylist', data: { playlist: { businessId: 'nope' } } }))
        .thenThrows(kind('NotFound'));
      spec
        .given([])
        .when(at({ type: 'RemoveBookmarks', data: { playlist: { businessId: 'nope' } } }))
        .thenThrows(kind('NotFound'));
    });
  });

  describe('when playlists exist', () => {
    const past = [
      watchLater(),
      created('p1', 'p1', 'Jazz'),
      added('p1', 1, 'urn:a', 10, 10),
      created('u2', 'fav', 'Favourites'),
      added('u2', 2, 'urn:b', 20, 20),
    ];

    it('SavePlaylist with a new business id creates a standard playlist with the given technical id', () =>
      spec
        .given([watchLater()])
        .when(at({ type: 'SavePlaylist', data: { businessId: 'rock', newPlaylistId: 'u9', name: 'Rock', items: [] } }))
        .then([created('u9', 'rock', 'Rock', now)]));

    it('SavePlaylist with a known business id renames it, and changes nothing when the name is the same', () => {
      spec
        .given(past)
        .when(at({ type: 'SavePlaylist', data: { businessId: 'fav', newPlaylistId: 'ignored', name: 'Best', items: [] } }))
        .then([{ type: 'PlaylistRenamed', data: { playlistId: 'u2', name: 'Best', date: now } }]);
      spec
        .given(past)
        .when(at({ type: 'SavePlaylist', data: { businessId: 'fav', newPlaylistId: 'ignored', name: 'Favourites', items: [] } }))
        .thenNothingHappens();
    });

    it('SavePlaylist with items creates and fills in one decision, continuing the user-wide bookmark sequence', () =>
      spec
        .given([watchLater(), added('watch_later', 1, 'urn:z')])
        .when(
          at({
            type: 'SavePlaylist',
            data: { businessId: 'new-one', newPlaylistId: 'u3', name: 'N', items: [{ itemId: 'urn:a', date: 3 }] },
          }),
        )
        .then([created('u3', 'new-one', 'N', now), added('u3', 2, 'urn:a', 3)]));

    it('SavePlaylist on an existing playlist adds only what is missing', () =>
      spec
        .given(past)
        .when(
          at({
            type: 'SavePlaylist',
            data: { businessId: 'p1', newPlaylistId: 'x', name: 'Jazz', items: [{ itemId: 'urn:a' }, { itemId: 'urn:c' }] },
          }),
        )
        .then([added('p1', 3, 'urn:c')]));

    it('adds an item with the next id of the user (ids are per user, not per playlist)', () =>
      spec
        .given(past)
        .when(at({ type: 'AddBookmarks', data: { playlist: { businessId: 'fav' }, items: [{ itemId: 'urn:a' }] } }))
        .then([added('u2', 3, 'urn:a')]));

    it('keeps one bookmark per item: adding it again changes nothing, also within one request', () => {
      spec
        .given(past)
        .when(at({ type: 'AddBookmarks', data: { playlist: { id: 'p1' }, items: [{ itemId: 'urn:a', date: 5 }] } }))
        .thenNothingHappens();
      spec
        .given(past)
        .when(
          at({ type: 'AddBookmarks', data: { playlist: { id: 'p1' }, items: [{ itemId: 'x' }, { itemId: 'urn:a' }, { itemId: 'x' }] } }),
        )
        .then([added('p1', 3, 'x')]);
    });

    it('uses the client date only when it is earlier than the server time', () => {
      spec
        .given(past)
        .when(at({ type: 'AddBookmarks', data: { playlist: { id: 'p1' }, items: [{ itemId: 'old', date: now - 1000 }] } }))
        .then([added('p1', 3, 'old', now - 1000)]);
      spec
        .given(past)
        .when(at({ type: 'AddBookmarks', data: { playlist: { id: 'p1' }, items: [{ itemId: 'future', date: now + 1000 }] } }))
        .then([added('p1', 3, 'future', now)]);
      expect([bookmarkDate(undefined, now), bookmarkDate(now, now), bookmarkDate(now - 1, now)]).toEqual([now, now, now - 1]);
    });

    it('refuses bookmarks past the limit, all or none', () => {
      spec
        .given(past)
        .when(at({ type: 'AddBookmarks', data: { playlist: { id: 'p1' }, items: [{ itemId: 'b' }, { itemId: 'c' }] } }))
        .then([added('p1', 3, 'b'), added('p1', 4, 'c')]);
      spec
        .given(past)
        .when(at({ type: 'AddBookmarks', data: { playlist: { id: 'p1' }, items: [{ itemId: 'b' }, { itemId: 'c' }, { itemId: 'd' }] } }))
        .thenThrows(kind('QuotaExceeded'));
    });

    it('a full playlist still accepts an item it already holds', () =>
      spec
        .given([...past, added('p1', 3, 'b'), added('p1', 4, 'c')])
        .when(at({ type: 'AddBookmarks', data: { playlist: { id: 'p1' }, items: [{ itemId: 'b' }] } }))
        .thenNothingHappens());

    it('removes one bookmark by id, and refuses an id that is not in that playlist', () => {
      spec
        .given(past)
        .when(at({ type: 'RemoveBookmark', data: { playlist: { id: 'p1' }, bookmarkId: 1 } }))
        .then([removed('p1', [1])]);
      spec
        .given(past)
        .when(at({ type: 'RemoveBookmark', data: { playlist: { id: 'p1' }, bookmarkId: 2 } }))
        .thenThrows(kind('NotFound'));
    });

    it('removes every bookmark, or those named by id or item id (either matches), ignoring unknown ones', () => {
      const full = [...past, added('p1', 3, 'b'), added('p1', 4, 'c')];
      spec
        .given(full)
        .when(at({ type: 'RemoveBookmarks', data: { playlist: { id: 'p1' } } }))
        .then([removed('p1', [1, 3, 4])]);
      spec
        .given(full)
        .when(at({ type: 'RemoveBookmarks', data: { playlist: { id: 'p1' }, bookmarkIds: [3, 99] } }))
        .then([removed('p1', [3])]);
      spec
        .given(full)
        .when(at({ type: 'RemoveBookmarks', data: { playlist: { id: 'p1' }, itemIds: ['c', 'zz'], bookmarkIds: [1] } }))
        .then([removed('p1', [1, 4])]);
      spec
        .given(full)
        .when(at({ type: 'RemoveBookmarks', data: { playlist: { id: 'p1' }, itemIds: ['zz'] } }))
        .thenNothingHappens();
    });

    it('deletes a playlist by id or business id', () => {
      spec
        .given(past)
        .when(at({ type: 'DeletePlaylist', data: { playlist: { id: 'p1' } } }))
        .then([deleted('p1')]);
      spec
        .given(past)
        .when(at({ type: 'DeletePlaylist', data: { playlist: { businessId: 'fav' } } }))
        .then([deleted('u2')]);
    });

    it('never deletes watch later, alone or with the others', () => {
      spec
        .given(past)
        .when(at({ type: 'DeletePlaylist', data: { playlist: { businessId: 'watch_later' } } }))
        .thenThrows(kind('Conflict'));
      spec
        .given(past)
        .when(at({ type: 'DeletePlaylist', data: { playlist: { id: 'watch_later' } } }))
        .thenThrows(kind('Conflict'));
      spec
        .given(past)
        .when(at({ type: 'DeleteAllPlaylists', data: {} }))
        .then([deleted('p1'), deleted('u2')]);
    });

    it('renames watch later like any playlist (it exists for every user)', () =>
      spec
        .given(past)
        .when(at({ type: 'SavePlaylist', data: { businessId: 'watch_later', newPlaylistId: 'x', name: 'Later', items: [] } }))
        .then([{ type: 'PlaylistRenamed', data: { playlistId: 'watch_later', name: 'Later', date: now } }]));

    it('EnsureWatchLater changes nothing once it exists', () =>
      spec
        .given(past)
        .when(at({ type: 'EnsureWatchLater', data: {} }))
        .thenNothingHappens());
  });

  describe('limits on playlists', () => {
    const two = [watchLater(), created('a'), created('b')];

    it('refuses a standard playlist past the limit; watch later does not count', () => {
      spec
        .given([watchLater(), created('a')])
        .when(at({ type: 'SavePlaylist', data: { businessId: 'b', newPlaylistId: 'b', name: 'B', items: [] } }))
        .then([created('b', 'b', 'B', now)]);
      spec
        .given(two)
        .when(at({ type: 'SavePlaylist', data: { businessId: 'c', newPlaylistId: 'c', name: 'C', items: [] } }))
        .thenThrows(kind('QuotaExceeded'));
    });

    it('a deleted playlist frees its place, and its business id can be taken again under a new technical id', () =>
      spec
        .given([...two, deleted('a')])
        .when(at({ type: 'SavePlaylist', data: { businessId: 'a', newPlaylistId: 'a2', name: 'A', items: [] } }))
        .then([created('a2', 'a', 'A', now)]));

    it('a technical id that is taken is refused', () =>
      spec
        .given([watchLater(), created('a', 'x')])
        .when(at({ type: 'SavePlaylist', data: { businessId: 'y', newPlaylistId: 'a', name: 'Y', items: [] } }))
        .thenThrows(kind('Conflict')));
  });

  describe('the bookmark sequence', () => {
    it('never reuses an id, even after the bookmark or its playlist is gone', () =>
      spec
        .given([watchLater(), created('a'), added('a', 1, 'x'), added('a', 2, 'y'), removed('a', [2]), deleted('a')])
        .when(at({ type: 'AddBookmarks', data: { playlist: { id: 'watch_later' }, items: [{ itemId: 'x' }] } }))
        .then([added('watch_later', 3, 'x')]));
  });

  it('fold agrees with evolve, and evolve leaves the given state untouched', () => {
    const events: PlaylistEvent[] = [
      watchLater(),
      created('a'),
      added('a', 1, 'x', 5, 6),
      { type: 'PlaylistRenamed', data: { playlistId: 'a', name: 'A', date: 7 } },
      added('a', 2, 'y'),
      removed('a', [1], 8),
      created('b'),
      deleted('b'),
    ];
    const stepwise = events.reduce(evolve, initialState());
    expect(fold(events, initialState())).toEqual(stepwise);
    const before = fold(events.slice(0, 3), initialState());
    const snapshot = structuredClone(before);
    // Folding from a state (a cached one, a snapshot) goes on from it, and leaves it untouched.
    expect(fold(events.slice(3), before)).toEqual(stepwise);
    evolve(before, removed('a', [1]));
    expect(before).toEqual(snapshot);
    const a = stepwise.playlists.get('a')!;
    expect([a.name, a.lastUpdate, [...a.bookmarks.values()]]).toEqual(['A', 8, [{ id: 2, itemId: 'y', date: now }]]);
    expect(stepwise.lastBookmarkId).toBe(2);
  });
});

describe('playlists snapshot', () => {
  it('gives back the same state after a trip through JSON', () => {
    const events = [watchLater(), created('a'), added('a', 1, 'x', 5, 6), added('a', 2, 'y'), removed('a', [1], 8), created('b')];
    const state = fold(events, initialState());
    expect(playlistsSnapshot.decode(JSON.parse(JSON.stringify(playlistsSnapshot.encode(state))))).toEqual(state);
  });
});
