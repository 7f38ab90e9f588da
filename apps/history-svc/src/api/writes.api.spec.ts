import { apiSpecification } from '@udp/test-system';
import { createHistoryService } from '../app';
import { type HistoryEvent, historyStream } from '../domain/aggregate';
import { cleared, deleted, recorded } from '../testing/history-events';

/** Every write endpoint of history-svc: given the user's events, when a request, then the answer and the new events. */
const NOW = 1_700_000_000_000;
const spec = apiSpecification<HistoryEvent>({
  prefixes: ['/api/history'],
  create: (deps) => createHistoryService({ ...deps, now: () => NOW }),
});

const alice = historyStream('alice');
const bob = historyStream('bob');

describe('POST /api/history(/v2): add or update an item', () => {
  it.each(['/api/history/v2', '/api/history'])('records a new item under the next technical id, the server time as its date (%s)', (path) =>
    spec
      .given(alice, [recorded('urn:a', 1, NOW - 10)])
      .when({ as: 'alice', method: 'post', path, body: { item_id: 'urn:b', last_playback_position: 12.5, device_id: 'ios' } })
      .then({
        status: 200,
        body: { item_id: 'urn:b', id: 2, date: NOW, deleted: false, device_id: 'ios', last_playback_position: 12.5 },
        events: [recorded('urn:b', 2, NOW, { deviceId: 'ios', lastPlaybackPosition: 12.5 })],
      }),
  );

  it('updates a stored item under its id, keeping the fields the client left out', () =>
    spec
      .given(alice, [recorded('urn:a', 1, NOW - 10, { deviceId: 'tv', lastPlaybackPosition: 30 })])
      .when({ as: 'alice', method: 'post', path: '/api/history/v2', body: { item_id: 'urn:a', date: NOW - 5 } })
      .then({
        status: 200,
        body: { item_id: 'urn:a', id: 1, date: NOW - 5, deleted: false, device_id: 'tv', last_playback_position: 30 },
        events: [recorded('urn:a', 1, NOW - 5, { deviceId: 'tv', lastPlaybackPosition: 30 })],
      }));

  it('writes nothing for an older update and answers the stored, newer entry', () =>
    spec
      .given(alice, [recorded('urn:a', 1, NOW - 10, { lastPlaybackPosition: 30 })])
      .when({ as: 'alice', method: 'post', path: '/api/history/v2', body: { item_id: 'urn:a', date: NOW - 20, last_playback_position: 1 } })
      .then({ status: 200, body: { item_id: 'urn:a', id: 1, date: NOW - 10, deleted: false, last_playback_position: 30 }, events: [] }));

  it("writes nothing on bad input, and never into another user's stream", () =>
    spec
      .given(alice)
      .and(bob, [recorded('urn:a', 1, NOW - 10)])
      .when({ as: 'alice', method: 'post', path: '/api/history/v2', body: { item_id: 5 } })
      .then({
        status: 400,
        body: expect.objectContaining({ status: 400, errors: [expect.objectContaining({ field: 'item_id' })] }),
        events: [],
      }));
});

describe('POST /api/history(/v2)/batch: add or update several items', () => {
  it.each(['/api/history/v2/batch', '/api/history/batch'])('records each newer item in one append, in the order sent (%s)', (path) =>
    spec
      .given(alice, [recorded('urn:a', 1, NOW - 10), recorded('urn:b', 2, NOW - 10)])
      .and(bob)
      .when({
        as: 'alice',
        method: 'post',
        path,
        body: {
          data: [
            { item_id: 'urn:c', date: NOW - 3 },
            { item_id: 'urn:a', date: NOW - 20 },
            { item_id: 'urn:b', deleted: true },
            { item_id: 'urn:c', date: NOW - 1 },
          ],
        },
      })
      .then({
        status: 204,
        events: [recorded('urn:c', 3, NOW - 3), recorded('urn:b', 2, NOW, { deleted: true }), recorded('urn:c', 3, NOW - 1)],
      }),
  );
});

describe('DELETE /api/history/v2/{itemId}: delete one item', () => {
  it('tombstones the item at the server time', () =>
    spec
      .given(alice, [recorded('urn:a', 1, NOW - 10), recorded('urn:b', 2, NOW - 10)])
      .when({ as: 'alice', method: 'delete', path: '/api/history/v2/urn:b' })
      .then({ status: 204, events: [deleted('urn:b', 2, NOW)] }));

  it('writes nothing for an item deleted already', () =>
    spec
      .given(alice, [recorded('urn:a', 1, NOW - 10), deleted('urn:a', 1, NOW - 5)])
      .when({ as: 'alice', method: 'delete', path: '/api/history/v2/urn:a' })
      .then({ status: 204, events: [] }));

  it('answers 404 for an item only another user has, and changes neither stream', () =>
    spec
      .given(alice)
      .and(bob, [recorded('urn:secret', 1, NOW - 10)])
      .when({ as: 'alice', method: 'delete', path: '/api/history/v2/urn:secret' })
      .then({ status: 404, body: expect.objectContaining({ status: 404, title: 'Not Found' }), events: [] }));
});

describe('DELETE /api/history/{id} (deprecated): delete one item by technical id', () => {
  it('tombstones the item with that id', () =>
    spec
      .given(alice, [recorded('urn:a', 1, NOW - 10), recorded('urn:b', 2, NOW - 10)])
      .when({ as: 'alice', method: 'delete', path: '/api/history/1' })
      .then({ status: 204, events: [deleted('urn:a', 1, NOW)] }));

  it('answers 404 for an id only another user has', () =>
    spec
      .given(alice)
      .and(bob, [recorded('urn:secret', 1, NOW - 10)])
      .when({ as: 'alice', method: 'delete', path: '/api/history/1' })
      .then({ status: 404, body: expect.objectContaining({ status: 404 }), events: [] }));
});

describe('DELETE /api/history(/v2): delete all', () => {
  it.each(['/api/history/v2', '/api/history'])('tombstones every live item in one event (%s)', (path) =>
    spec
      .given(alice, [
        recorded('urn:a', 1, NOW - 10),
        recorded('urn:b', 2, NOW - 10),
        deleted('urn:a', 1, NOW - 5),
        recorded('urn:c', 3, NOW - 4),
      ])
      .and(bob, [recorded('urn:a', 1, NOW - 10)])
      .when({ as: 'alice', method: 'delete', path })
      .then({ status: 204, events: [cleared(NOW, ['urn:b', 'urn:c'])] }),
  );

  it('writes nothing when nothing is live', () =>
    spec
      .given(alice, [recorded('urn:a', 1, NOW - 10, { deleted: true })])
      .when({ as: 'alice', method: 'delete', path: '/api/history/v2' })
      .then({ status: 204, events: [] }));
});
