import request from 'supertest';
import { Authenticator, DEV_ISSUER, InternalIdentity, signDevToken } from '@udp/auth';
import { InProcessBus } from '@udp/bus';
import { createLogger } from '@udp/telemetry';
import { createGateway } from '../gateway';
import type { RateLimits } from '../rate-limits';
import { CursorCodec } from './cursor';
import { ChangeHub } from './hub';
import { changesRouter, changesStream } from './routes';
import { TicketIssuer } from './tickets';

/**
 * Tickets of `GET /api/changes?ticket=` through the gateway's routes, with the issuer's clock in the test's hand: good
 * for 30 s exactly, once; and the limit per user on live sync's routes. A ticket or credentials that are accepted meet
 * the stream cap, 0 here (503): no service is needed behind.
 */
const secret = 't'.repeat(40);
const identity = new InternalIdentity('i'.repeat(32));
const bus = new InProcessBus();
let clock = 1_000_000;
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
/** The gateway with live sync's routes alone (the stream served beside the router, as apps/gateway does). */
const gatewayWith = (rateLimits?: RateLimits) => {
  const changes = {
    hub,
    tickets: new TicketIssuer(identity.derivedKey('changes-ticket'), { now: () => clock }),
    cursors,
    authenticator,
  };
  return createGateway({
    logger,
    identity,
    authenticator,
    routes: [],
    rateLimits,
    routers: [changesRouter(changes)],
    streams: [changesStream(changes)],
  });
};
const gateway = gatewayWith();

afterAll(() => bus.close());

const ticketFor = async (user: string) =>
  (
    await request(gateway)
      .post('/api/changes/ticket')
      .set('authorization', `Bearer ${await signDevToken(secret, user)}`)
      .expect(200)
  ).body as {
    ticket: string;
    expires_in: number;
  };
const open = (ticket: string) => request(gateway).get(`/api/changes?ticket=${ticket}`);

describe('change stream tickets', () => {
  it('is accepted until 30 s after its issue, and spent only by a stream that opens', async () => {
    const { ticket, expires_in } = await ticketFor('alice');
    expect(expires_in).toBe(30);
    clock += 29_999;
    // Past authentication: the cap of streams answers, before the ticket is spent; so it is good again.
    expect((await open(ticket)).status).toBe(503);
    // A cursor that is not this user's: a 400 naming it, and the ticket still unspent.
    const foreign = await request(gateway).get(`/api/changes?ticket=${ticket}&last_event_id=c1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors[0].field).toBe('last_event_id');
    expect((await open(ticket)).status).toBe(503);
  });

  it('is good for the longest user id', async () => {
    const { ticket } = await ticketFor('u'.repeat(128));
    expect((await open(ticket)).status).toBe(503);
  });

  it('is refused from 30 s after its issue', async () => {
    const { ticket } = await ticketFor('alice');
    clock += 30_000;
    const expired = await open(ticket);
    expect(expired.status).toBe(401);
    expect(expired.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(expired.body.detail).toMatch(/expired/);
  });

  it('is refused when altered, made up or malformed', async () => {
    const { ticket } = await ticketFor('alice');
    const altered = ticket.slice(0, 20) + (ticket[20] === 'A' ? 'B' : 'A') + ticket.slice(21);
    expect((await open(altered)).status).toBe(401);
    expect((await open('A'.repeat(40))).status).toBe(401);
    const malformed = await open('short');
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].field).toBe('ticket');
  });

  it('answers HEAD with the head of a stream and opens none', async () => {
    const head = await request(gateway)
      .head('/api/changes')
      .set('authorization', `Bearer ${await signDevToken(secret, 'alice')}`);
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(hub.open).toBe(0);
    expect((await request(gateway).head('/api/changes')).status).toBe(401);
  });

  it('needs credentials to be issued', async () => {
    expect((await request(gateway).post('/api/changes/ticket')).status).toBe(401);
  });
});

const as = async (user: string) => `Bearer ${await signDevToken(secret, user)}`;

describe("live sync's routes and the limit per user", () => {
  const gateway = gatewayWith({ windowS: 60, perUser: 3, perAddress: 0 });
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

  it('refuses a Token-Type that names no scheme, as on every authenticated route', async () => {
    const refused = await request(gateway)
      .get('/api/changes')
      .set('authorization', await as('carol'))
      .set('token-type', 'Basic');
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].field).toBe('Token-Type');
  });

  it('answers bad credentials with a 401 before any limit', async () => {
    const refused = await request(gateway).get('/api/changes').set('authorization', 'Bearer nonsense');
    expect(refused.status).toBe(401);
  });
});
