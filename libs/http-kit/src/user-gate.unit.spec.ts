import { Router } from 'express';
import request from 'supertest';
import { IDENTITY_HEADER, InternalIdentity } from '@udp/auth';
import { createLogger } from '@udp/telemetry';
import { waitUntil } from '@udp/test-kit';
import { serviceHttpApp } from './service-app';
import { UserGate } from './service-edge';

const identity = new InternalIdentity('g'.repeat(32));
const health = { store: { ping: async () => true }, readModels: { ping: async () => true }, projectors: [] };
const gate = new UserGate();
/** A write the test finishes when it likes: a request under way when the erasure begins. */
let finishWrite: (() => void) | undefined;
const routes = Router();
routes.post('/write', (_req, res) => {
  finishWrite = () => res.status(204).end();
});
routes.get('/read', (_req, res) => res.json({ ok: true }));
const app = serviceHttpApp({ logger: createLogger('test', 'silent'), maxBodyBytes: 1024, health, identity, routes: [routes], gate });
const as = (user: string) => identity.sign({ userId: user });

describe("a service's erasure boundary (UserGate)", () => {
  it("lets the user's erasure begin only once their requests under way ended, and refuses theirs meanwhile", async () => {
    const write = request(app)
      .post('/write')
      .set(IDENTITY_HEADER, as('ann'))
      .send({})
      .then((r) => r);
    // Under way once its handler runs (a fixed 30 ms was not always enough on a loaded machine).
    await waitUntil(() => finishWrite !== undefined, 5000, 'the write to reach its handler');
    let drained = false;
    const closed = gate.close('ann').then(() => (drained = true));
    const refused = await request(app).get('/read').set(IDENTITY_HEADER, as('ann'));
    expect(refused.status).toBe(409);
    expect(refused.headers['retry-after']).toBe('2');
    expect(refused.body.type).toBe('https://problems.udp.example/erasure-pending');
    // Another user is not held.
    expect((await request(app).get('/read').set(IDENTITY_HEADER, as('bob'))).status).toBe(200);
    expect(drained).toBe(false);
    finishWrite!();
    expect((await write).status).toBe(204);
    await closed;
    gate.open('ann');
    expect((await request(app).get('/read').set(IDENTITY_HEADER, as('ann'))).status).toBe(200);
  });

  it('begins at once for a user with nothing under way', async () => {
    await gate.close('cid');
    gate.open('cid');
  });
});
