import request from 'supertest';
import { Authenticator, DEV_ISSUER, InternalIdentity, signDevToken } from '@udp/auth';
import { InProcessBus } from '@udp/bus';
import { createLogger } from '@udp/telemetry';
import { createGateway } from '../gateway';
import { perUserLimit } from '../rate-limits';
import { CursorCodec } from './cursor';
import { inProcessHub } from '../testing/in-process-hub';
import { changesRouter, changesStream } from './routes';
import { TicketIssuer } from './tickets';

/**
 * A resume's reach and its cost to its user (docs/live-sync.md, "Cursors and resuming"): a cursor further behind than
 * the reach gets `close` (`resync`) and no change, and is charged to its user as the whole catch-up it asked for, so a
 * device resuming so in a loop meets its user's rate limit soon; another user is not charged.
 */
const secret = 'c'.repeat(40);
const identity = new InternalIdentity('u'.repeat(32));
const bus = new InProcessBus();
const cursors = new CursorCodec(identity.derivedKey('changes-cursor'));
/** How many of the user's history events follow the cursor, as history-svc would say. */
let behind = 0;
const services = {
  'http://history': { '/internal/history/changes': async () => ({ changes: [], position: '0', applied: behind, behind, more: false }) },
  'http://playlist': { '/internal/playlist/changes': async () => ({ changes: [], applied: 0 }) },
  'http://preference': { '/internal/preference/changes': async () => ({ changes: [], position: '0', applied: '0', more: false }) },
  'http://profile': { '/internal/profile/changes': async () => ({ changes: [], applied: 0 }) },
};
const userLimit = perUserLimit({ windowS: 60, perUser: 25, perAddress: 0 });
const hub = inProcessHub(
  { bus, identity, cursors, logger: createLogger('test', 'silent'), services },
  { limits: { heartbeatS: 15, maxStreamsPerUser: 10, maxStreams: 100, maxBufferBytes: 65536, maxCatchUp: 1000 }, charge: userLimit.charge },
);
const authenticator = new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER });
const changes = { hub, tickets: new TicketIssuer(identity.derivedKey('changes-ticket')), cursors, authenticator };
const gateway = createGateway({
  logger: createLogger('test', 'silent'),
  identity,
  authenticator,
  routes: [],
  userLimit,
  routers: [changesRouter(changes)],
  streams: [changesStream(changes)],
});
afterAll(() => bus.close());

const resume = async (user: string) =>
  request(gateway)
    .get('/api/changes')
    .set('authorization', `Bearer ${await signDevToken(secret, user)}`)
    .set('last-event-id', cursors.encode(user, { history: '0', playlist: 0, preference: '0', profile: 0, epoch: 0 }));

describe("a resume's reach", () => {
  it('answers a cursor beyond it with close (resync) and no change, charged as a whole catch-up to its user only', async () => {
    behind = 5000;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await resume('ann');
      statuses.push(answer.status);
      if (answer.status === 200) {
        expect(answer.text).toMatch(/event: close\ndata: \{"reason":"resync"/);
        expect(answer.text).not.toMatch(/event: (history|ready)/);
      }
    }
    // 25 requests a minute: each resume counts 10 (its own and the 9 more pages it asked for); the fourth is refused.
    expect(statuses).toEqual([200, 200, 200, 429]);
    // Another user's budget is their own.
    const other = await resume('bob');
    expect(other.status).toBe(200);
    expect(other.text).toMatch(/"reason":"resync"/);
  });
});
