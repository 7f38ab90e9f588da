import type { Client, ServiceMix } from './replay-equals-live';

/**
 * Each service as "replay equals live" drives it (replay-equals-live.ts): its mix of operations, what it serves a user,
 * and what of its read models is bookkeeping; the specs add how the service is built (only they may import apps).
 * Shared by the in-process suites (replay-equals-live.<service>.api.spec.ts)
 * and the one that kills the embedded process (replay-equals-live-crash.int.spec.ts).
 */

/** history-svc's mix: an entry, a batch, one entry deleted, the whole history cleared (testing/replay-equals-live.ts). */
const ITEMS = ['urn:i1', 'urn:i2', 'urn:i3', 'urn:i4'];

export const historyMix: ServiceMix = {
  service: 'history-svc',
  operation(_user, { random, marker, now }) {
    const r = random.next();
    // The marker is the device id, which every listed entry shows. The date is the clock's when the request is sent (not
    // when it is drawn: two drawn together may be sent in either order), so that a later write is newer: the newest
    // date wins, and a write sent later with an older date would rightly leave no trace.
    if (r < 0.45) {
      const item = random.pick(ITEMS);
      const device = marker();
      const position = random.int(0, 3600);
      return {
        name: `POST /api/history/v2 ${item} ${device}`,
        send: (c: Client) => c.post('/api/history/v2', { item_id: item, device_id: device, date: now(), last_playback_position: position }),
        alsoAccepted: [429],
        writes: [{ marker: device, key: [item] }],
      };
    }
    if (r < 0.7) {
      const items = ITEMS.filter(() => random.chance(0.5));
      const entries = (items.length ? items : [random.pick(ITEMS)]).map((item) => ({ item_id: item, device_id: marker() }));
      return {
        name: `POST /api/history/v2/batch ${entries.map((e) => `${e.item_id} ${e.device_id}`).join(', ')}`,
        send: (c: Client) => c.post('/api/history/v2/batch', { data: entries.map((e) => ({ ...e, date: now() })) }),
        alsoAccepted: [429],
        writes: entries.map((e) => ({ marker: e.device_id, key: [e.item_id] })),
      };
    }
    if (r < 0.9) {
      const item = random.pick(ITEMS);
      return {
        name: `DELETE /api/history/v2/${item}`,
        send: (c: Client) => c.delete(`/api/history/v2/${encodeURIComponent(item)}`),
        alsoAccepted: [404, 429],
        removes: [[item]],
      };
    }
    return { name: 'DELETE /api/history/v2', send: (c: Client) => c.delete('/api/history/v2'), alsoAccepted: [429], removes: [[]] };
  },
  // The trending documents' `revision` is a write counter (every change of a count, an erasure's included, adds one) and
  // `position`/`positions` the store positions counted so far (their idempotence guard: a live count keeps the position
  // of events an erasure deleted since): the projection's bookkeeping, not what the log says. `users` and `date` are.
  bookkeeping: {
    trending_counts: ['revision', 'position', 'positions'],
    trending_items: ['revision'],
  },
  // A count that fell to no users is kept by the projection (its guard of positions) but removed when an erasure
  // recounts the item (`erasingTrendingToo`): holding nothing, it is the same as none. (Reported: the rebuild keeps
  // such a document where the live store, after an erasure, has none.)
  sameAsNone: { trending_counts: (doc) => doc.users === 0 },
  // Tombstones too: an erased user's entries must not come back even as deleted ones.
  served: async (c) => (await c.get('/api/history/v2?with_deleted=true&limit=100').expect(200)).body,
};

/**
 * playlist-svc's mix: a playlist created or renamed, a bookmark added or removed, a playlist deleted, every playlist
 * deleted, and the watch-later list (testing/replay-equals-live.ts).
 */
const PLAYLISTS = ['p1', 'p2', 'p3'];
const WATCH_LATER = 'watch_later';

export const playlistsMix: ServiceMix = {
  service: 'playlist-svc',
  operation(_user, { random, marker, written, now }) {
    const r = random.next();
    // The markers are a playlist's name and a bookmark's item id, which the playlist's answer shows.
    if (r < 0.25) {
      const playlist = random.pick(PLAYLISTS);
      const name = marker();
      return {
        name: `POST /api/playlist/v3/${playlist} name ${name}`,
        send: (c: Client) => c.post(`/api/playlist/v3/${playlist}`, { name }),
        writes: [{ marker: name, key: [playlist, '#name'] }],
      };
    }
    if (r < 0.6) {
      // Mostly to a playlist the user has created (it may have been deleted or erased since: then 404).
      const named = [...new Set(written.filter((w) => w.key[1] === '#name').map((w) => w.key[0]))];
      const playlist = random.chance(0.3)
        ? WATCH_LATER
        : named.length > 0 && random.chance(0.8)
          ? random.pick(named)
          : random.pick(PLAYLISTS);
      const itemId = `urn:${marker()}`;
      return {
        name: `POST /api/playlist/v3/${playlist}/bookmarks ${itemId}`,
        send: (c: Client) => c.post(`/api/playlist/v3/${playlist}/bookmarks`, { itemId, date: now() }),
        // No such playlist (not created yet, or deleted meanwhile).
        alsoAccepted: [404],
        writes: [{ marker: itemId, key: [playlist, itemId] }],
      };
    }
    const bookmarks = written.filter((w) => w.key[1] !== '#name');
    if (r < 0.8 && bookmarks.length > 0) {
      const [playlist, itemId] = random.pick(bookmarks).key;
      return {
        name: `DELETE /api/playlist/v3/${playlist}/bookmarks?mediaIds=${itemId}`,
        send: (c: Client) => c.delete(`/api/playlist/v3/${playlist}/bookmarks?mediaIds=${encodeURIComponent(itemId)}`),
        alsoAccepted: [404],
        removes: [[playlist, itemId]],
      };
    }
    if (r < 0.95) {
      const playlist = random.pick(PLAYLISTS);
      return {
        name: `DELETE /api/playlist/v3/${playlist}`,
        send: (c: Client) => c.delete(`/api/playlist/v3/${playlist}`),
        alsoAccepted: [404],
        removes: [[playlist]],
      };
    }
    // Every playlist but watch later: counted as removing all of the user's data (a bound the check may use).
    return { name: 'DELETE /api/playlist/v3', send: (c: Client) => c.delete('/api/playlist/v3'), removes: [[]] };
  },
  async served(c) {
    const list = (await c.get('/api/playlist/v3').expect(200)).body as { playlists: Array<{ businessId: string }> };
    const each = await Promise.all(list.playlists.map(async (p) => (await c.get(`/api/playlist/v3/${p.businessId}`).expect(200)).body));
    return { list, each };
  },
};

/** preference-svc's mix: a preference set whole, a path set in it, a preference deleted (testing/replay-equals-live.ts). */
const KEYS = ['k1', 'k2', 'k3'];
const PATHS = ['b/c', 'd'];

export const preferencesMix: ServiceMix = {
  service: 'preference-svc',
  operation(_user, { random, marker }) {
    const r = random.next();
    const key = random.pick(KEYS);
    // The markers are values in the documents.
    if (r < 0.45) {
      const value = marker();
      return {
        name: `PUT /api/preference/${key} a=${value}`,
        send: (c: Client) => c.put(`/api/preference/${key}`, { a: value, b: { c: 1 } }),
        writes: [{ marker: value, key: [key, 'a'] }],
        // The whole document is replaced.
        removes: [[key]],
      };
    }
    if (r < 0.8) {
      const path = random.pick(PATHS);
      const value = marker();
      return {
        name: `PUT /api/preference/${key}/${path} ${value}`,
        send: (c: Client) => c.put(`/api/preference/${key}/${path}`, value),
        // No such preference (yet, or any more).
        alsoAccepted: [404],
        writes: [{ marker: value, key: [key, ...path.split('/')] }],
      };
    }
    return {
      name: `DELETE /api/preference/${key}`,
      send: (c: Client) => c.delete(`/api/preference/${key}`),
      alsoAccepted: [404],
      removes: [[key]],
    };
  },
  async served(c) {
    const keys = (await c.get('/api/preference').expect(200)).body as string[];
    const each = await Promise.all(keys.map(async (key) => (await c.get(`/api/preference/${key}`).expect(200)).body));
    return { keys, each };
  },
};

/** profile-svc's mix: the profile read (which creates it) and updated (testing/replay-equals-live.ts). */
const FIELDS = ['displayName', 'firstName'];

export const profileMix: ServiceMix = {
  service: 'profile-svc',
  operation(_user, { random, marker }) {
    if (random.chance(0.3)) return { name: 'GET /api/profile/v3', send: (c: Client) => c.get('/api/profile/v3') };
    // The marker is a name field's value.
    const field = random.pick(FIELDS);
    const value = marker();
    return {
      name: `PUT /api/profile/v3 ${field}=${value}`,
      send: (c: Client) => c.put('/api/profile/v3', { [field]: value }),
      writes: [{ marker: value, key: [field] }],
    };
  },
  // Read last, after the read models were compared: reading creates the profile of a user who has none.
  served: async (c) => (await c.get('/api/profile/v3').expect(200)).body,
};
