import { randomUUID } from 'node:crypto';
import express from 'express';
import { acceptFromGateway, requireCaller, userIdOf } from '@udp/http-kit';
import { apiSpecification, recordedEvents } from './api-specification';

/**
 * The helper itself, on a tiny counter service: POST /api/counter appends `{ type: 'Counted', data: { by } }` to the
 * caller's stream `counter-<user>` (or, to let the specs below misbehave on purpose, to `into`, or without the owner).
 */
type CounterEvent = { type: 'Counted'; data: { by: number } };
const counterOf = (userId: string) => ({ id: `counter-${userId}`, owner: { userId } });

const spec = apiSpecification<CounterEvent>({
  prefixes: ['/api/counter'],
  create: async ({ store, identity }) => {
    const app = express();
    app.use(express.json());
    app.post('/api/counter', acceptFromGateway(identity), requireCaller, async (req, res) => {
      const userId = userIdOf(res);
      const { by, into, withoutOwner } = req.body as { by: number; into?: string; withoutOwner?: boolean };
      const streamId = into ?? counterOf(userId).id;
      await store.appendToStream(
        streamId,
        [{ id: randomUUID(), type: 'Counted', data: { by }, ...(!withoutOwner && { metadata: { owner: { userId } } }) }],
        { expectedRevision: 'any' },
      );
      const total = (await store.readStream(streamId)).events.reduce((sum, e) => sum + (e.data.by as number), 0);
      res.status(201).json({ total });
    });
    return { app, stop: async () => undefined };
  },
});

const counted = (by: number): CounterEvent => ({ type: 'Counted', data: { by } });
const post = (body: object) => ({ as: 'alice', method: 'post' as const, path: '/api/counter', body });

describe('apiSpecification', () => {
  it('seeds the given events, sends the request through the gateway, and checks the answer and the new events', async () => {
    const res = await spec
      .given(counterOf('alice'), [counted(1), counted(2)])
      .when(post({ by: 4 }))
      .then({ status: 201, body: { total: 7 }, events: [counted(4)] });
    expect(res.body).toEqual({ total: 7 });
  });

  it('fails when the events appended are not the ones expected', async () => {
    await expect(
      spec
        .given(counterOf('alice'))
        .when(post({ by: 4 }))
        .then({ status: 201, events: [counted(5)] }),
    ).rejects.toThrow(/toEqual/);
    await expect(
      spec
        .given(counterOf('alice'))
        .when(post({ by: 4 }))
        .then({ status: 201, events: [] }),
    ).rejects.toThrow(/toEqual/);
  });

  it('fails on another status or body, and on an unauthenticated request the gateway refuses', async () => {
    await expect(
      spec
        .given(counterOf('alice'))
        .when(post({ by: 4 }))
        .then({ status: 200, events: [counted(4)] }),
    ).rejects.toThrow(/"status": 201/);
    await expect(
      spec
        .given(counterOf('alice'))
        .when(post({ by: 4 }))
        .then({ status: 201, body: { total: 5 }, events: [counted(4)] }),
    ).rejects.toThrow();
    await expect(
      spec
        .given(counterOf('alice'))
        .when({ ...post({ by: 4 }), as: undefined })
        .then({ status: 201, events: [counted(4)] }),
    ).rejects.toThrow(/401/);
  });

  it('fails when the request changed another stream given, or appended an event without its owner', async () => {
    await expect(
      spec
        .given(counterOf('alice'))
        .and(counterOf('bob'), [counted(1)])
        .when(post({ by: 4, into: counterOf('bob').id }))
        .then({ status: 201, events: [] }),
    ).rejects.toThrow(/counter-bob/);
    await expect(
      spec
        .given(counterOf('alice'))
        .when(post({ by: 4, withoutOwner: true }))
        .then({ status: 201, events: [counted(4)] }),
    ).rejects.toThrow();
  });

  it('refuses a stream given twice', () => {
    expect(() => spec.given(counterOf('alice')).and(counterOf('alice'), [counted(1)])).toThrow(/counter-alice is given twice/);
  });
});

describe('recordedEvents', () => {
  it('numbers revisions and positions from where it is told, and records the owner', () => {
    const events = recordedEvents(counterOf('alice'), [counted(1), counted(2)], 3, 10n);
    expect(
      events.map(({ streamId, revision, position, metadata, type, data }) => ({ streamId, revision, position, metadata, type, data })),
    ).toEqual([
      { streamId: 'counter-alice', revision: 3, position: 10n, metadata: { owner: { userId: 'alice' } }, type: 'Counted', data: { by: 1 } },
      { streamId: 'counter-alice', revision: 4, position: 11n, metadata: { owner: { userId: 'alice' } }, type: 'Counted', data: { by: 2 } },
    ]);
    expect(recordedEvents('plain', [counted(1)])[0].metadata).toEqual({});
  });
});
