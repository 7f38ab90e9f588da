import express from 'express';
import request from 'supertest';
import { Authenticator, DEV_ISSUER, InternalIdentity, signDevToken } from '@udp/auth';
import { InProcessBus } from '@udp/bus';
import { erasureEvents } from '@udp/contracts';
import { MemoryReadModelStore } from '@udp/readmodel';
import { createLogger } from '@udp/telemetry';
import { waitUntil } from '@udp/test-kit';
import { type ErasureEpochRow, ErasureHolds } from './erasure-holds';
import { createGateway } from './gateway';

const secret = 'h'.repeat(40);
const identity = new InternalIdentity('j'.repeat(32));
const logger = createLogger('test', 'silent');
const { ERASURE_TOPICS } = erasureEvents;

/** What the export-worker answers `DELETE /api/data` with, once the test lets it (set while a DELETE waits for it). */
let answerErasure: ((status: 202 | 204) => void) | undefined;
const service = express();
service.delete('/api/data', (_req, res) => {
  answerErasure = (status) => {
    answerErasure = undefined;
    if (status === 202) res.status(202).location('/api/data/erasure/e-202').json({ erasureId: 'e-202', status: 'pending' });
    else res.status(204).end();
  };
});
service.get('/api/data/erasure/:id', (_req, res) => res.json({ status: 'pending' }));
service.use((_req, res) => res.json({ served: true }));

let clock = 1_000_000;
const bus = new InProcessBus();
const store = new MemoryReadModelStore();
const epochs = store.collection<ErasureEpochRow>('erasure_epochs');
const holds = new ErasureHolds({ bus, epochs, key: Buffer.alloc(32, 7), logger, holdMs: 60_000, now: () => clock });
const gateway = createGateway({
  logger,
  identity,
  authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
  erasureHolds: holds,
  routes: [
    { prefixes: ['/api/history'], url: 'http://history', handler: service },
    { prefixes: ['/api/data'], url: 'http://export-worker', handler: service },
  ],
});

beforeAll(() => holds.start());
afterAll(async () => {
  await holds.stop();
  await bus.close();
});

const as = async (user: string) => `Bearer ${await signDevToken(secret, user)}`;
const get = async (user: string, path = '/api/history/v2') =>
  request(gateway)
    .get(path)
    .set('authorization', await as(user));
const requested = (userId: string, erasureId: string, requestedAt = clock) =>
  bus.publish(ERASURE_TOPICS.requested, [{ key: userId, value: { erasureId, userId, requestedAt } }]);
const completed = (userId: string, erasureId: string) =>
  bus.publish(ERASURE_TOPICS.completed, [
    { key: userId, value: { erasureId, userId, services: [], requestedAt: clock, completedAt: clock } },
  ]);

/** Once the DELETE reached the export-worker, the gateway has seen it (polled: a fixed 50 ms may not be enough on a loaded machine). */
const deleteArrived = () => waitUntil(() => answerErasure !== undefined, 5000, 'the DELETE at the export-worker');

describe('the erasure boundary at the gateway', () => {
  it("holds the user's requests from the arrival of DELETE /api/data until it answers 204, its status and other users excepted", async () => {
    const erasing = request(gateway)
      .delete('/api/data')
      .set('authorization', await as('ann'));
    const answered = erasing.then((r) => r);
    await deleteArrived();
    const refused = await get('ann');
    expect(refused.status).toBe(409);
    expect(refused.headers['retry-after']).toBe('2');
    expect(refused.body).toMatchObject({ type: 'https://problems.udp.example/erasure-pending', status: 409 });
    expect(
      (
        await request(gateway)
          .post('/api/history/v2')
          .set('authorization', await as('ann'))
          .send({})
      ).status,
    ).toBe(409);
    expect((await get('ann', '/api/data/erasure/e-1')).status).toBe(200);
    expect((await get('bob')).status).toBe(200);
    answerErasure!(204);
    expect((await answered).status).toBe(204);
    expect((await get('ann')).status).toBe(200);
  });

  it('holds the user after a 202 until the completion of the erasure its Location names', async () => {
    const answered = request(gateway)
      .delete('/api/data')
      .set('authorization', await as('cid'))
      .then((r) => r);
    await deleteArrived();
    answerErasure!(202);
    expect((await answered).status).toBe(202);
    expect((await get('cid')).status).toBe(409);
    await completed('cid', 'another-erasure');
    expect((await get('cid')).status).toBe(409);
    await completed('cid', 'e-202');
    expect((await get('cid')).status).toBe(200);
  });

  it('holds a user whose erasure request it hears (from any replica) until it hears the completion', async () => {
    await requested('dee', 'e-dee');
    expect((await get('dee')).status).toBe(409);
    await completed('dee', 'e-dee');
    expect((await get('dee')).status).toBe(200);
    // A completion heard before its request (two topics, no order between them): the request holds nothing.
    await completed('dee', 'e-dee-2');
    await requested('dee', 'e-dee-2');
    expect((await get('dee')).status).toBe(200);
  });

  it('lets a hold lapse when neither the completion nor the request again is heard within its time', async () => {
    await requested('eve', 'e-eve');
    clock += 59_000;
    expect((await get('eve')).status).toBe(409);
    // Published again while pending (the coordinator does, every 30 s): held anew.
    await requested('eve', 'e-eve');
    clock += 59_000;
    expect((await get('eve')).status).toBe(409);
    clock += 1_001;
    expect((await get('eve')).status).toBe(200);
  });

  it("keeps each erased user's epoch, the newest, under a keyed hash of the id", async () => {
    expect(await holds.epochOf('fay')).toBe(0);
    await requested('fay', 'e-fay-1', 5_000);
    expect(await holds.epochOf('fay')).toBe(5_000);
    await requested('fay', 'e-fay-0', 4_000);
    expect(await holds.epochOf('fay')).toBe(5_000);
    await requested('fay', 'e-fay-2', 6_000);
    expect(await holds.epochOf('fay')).toBe(6_000);
    const rows = await epochs.find({});
    expect(JSON.stringify(rows)).not.toContain('fay');
  });
});
