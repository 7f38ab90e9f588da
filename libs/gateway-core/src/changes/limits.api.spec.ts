import request from 'supertest';
import { Authenticator, DEV_ISSUER, InternalIdentity, signDevToken } from '@udp/auth';
import { InProcessBus } from '@udp/bus';
import { createLogger } from '@udp/telemetry';
import { createGateway } from '../gateway';
import { CursorCodec } from './cursor';
import { ChangeHub } from './hub';
import { changesRouter } from './routes';
import { TicketIssuer } from './tickets';

/**
 * Live sync's routes meet the gateway's limit per user like every authenticated route: stream opens with credentials
 * and ticket issues count; a stream opened with a ticket was counted when its ticket was issued. The stream cap is 0
 * here, so a stream let through is a 503 (no service is needed behind).
 */
const secret = 't'.repeat(40);
const identity = new InternalIdentity('i'.repeat(32));
const bus = new InProcessBus();
const logger = createLogger('test', 'silent');
const cursors = new CursorCodec(identity.derivedKey('changes-cursor'));
const hub = new ChangeHub({
  bus,
  historyUrl: 'http://127.0.0.1:9',
  playlistUrl: 'http://127.0.0.1:9',
  preferenceUrl: 'http://127.0.0.1:9',
  profileUrl: 'http://127.0.0.1:9',
  identity,
  cursors,
  logger,
  limits: { heartbeatS: 15, maxStreamsPerUser: 10, maxStreams: 0, maxBufferBytes: 65536 },
});
const authenticator = new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER });
const gateway = createGateway({
  logger,
  identity,
  authenticator,
  routes: [],
  rateLimits: { windowS: 60, perUser: 3, perAddress: 0 },
  routers: [changesRouter({ hub, tickets: new TicketIssuer(identity.derivedKey('changes-ticket')), cursors, authenticator })],
});
afterAll(() => bus.close());

const as = async (user: string) => `Bearer ${await signDevToken(secret, user)}`;

describe("live sync's routes and the limit per user", () => {
  it('counts stream opens with credentials and ticket issues, and refuses the next with a 429 naming the limit', async () => {
    const alice = await as('alice');
    const { ticket } = (await request(gateway).post('/api/changes/ticket').set('authorization', alice).expect(200)).body as {
      ticket: string;
    };
    await request(gateway).get('/api/changes').set('authorization', alice).expect(503);
    // With the ticket: not counted again.
    await request(gateway).get(`/api/changes?ticket=${ticket}`).expect(503);
    await request(gateway).post('/api/changes/ticket').set('authorization', alice).expect(200);
    const refused = await request(gateway).get('/api/changes').set('authorization', alice);
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(refused.body.detail).toMatch(/RATE_LIMIT_PER_USER/);
    expect((await request(gateway).post('/api/changes/ticket').set('authorization', alice)).status).toBe(429);
    // Another user's budget is their own.
    await request(gateway)
      .get('/api/changes')
      .set('authorization', await as('bob'))
      .expect(503);
  });

  it('answers bad credentials with a 401 before any limit', async () => {
    const refused = await request(gateway).get('/api/changes').set('authorization', 'Bearer nonsense');
    expect(refused.status).toBe(401);
  });
});
