import type { Server } from 'node:http';
import express from 'express';
import { SignJWT, type JWTPayload } from 'jose';
import request from 'supertest';
import { Authenticator, DEV_ISSUER, IDENTITY_HEADER, InternalIdentity, signDevToken } from '@udp/auth';
import { closeServer, listen } from '@udp/runtime';
import { given } from '@udp/test-kit';
import { createLogger } from '@udp/telemetry';
import { createGateway } from './gateway';

/** Every claim of a token is checked at the gateway: a bad one is 401 problem+json, never a 5xx or another user. */
const secret = 'c'.repeat(40);
const identity = new InternalIdentity('i'.repeat(32));
const MAX_LIFETIME_S = 3600;
let upstream: Server;
let gateway: express.Express;

beforeAll(async () => {
  const app = express();
  app.use('/api/me', (req, res) => res.json(identity.verify(req.header(IDENTITY_HEADER))));
  const started = await listen(app, 0, '127.0.0.1');
  upstream = started.server;
  gateway = createGateway({
    logger: createLogger('test', 'silent'),
    identity,
    authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER, maxTokenLifetimeS: MAX_LIFETIME_S }),
    routes: [{ prefixes: ['/api/me'], url: `http://127.0.0.1:${started.port}` }],
  });
});
afterAll(() => closeServer(upstream));

const now = () => Math.floor(Date.now() / 1000);
/** A correctly signed token with exactly these claims (the signature is valid: only the claims are wrong). */
const signed = (claims: JWTPayload) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));
const valid = () => ({ iss: DEV_ISSUER, sub: 'alice', iat: now(), exp: now() + 600 });

/** GET /api/me through the gateway, with this bearer token. */
const me = (token: string) => request(gateway).get('/api/me').set('authorization', `Bearer ${token}`);

describe('JWT claims at the gateway', () => {
  it('accepts a token with valid claims', async () => {
    await given(() => signed(valid()))
      .when(me)
      .then((res) => {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ userId: 'alice' });
      });
  });

  it.each<[string, JWTPayload]>([
    ['a numeric sub', { ...valid(), sub: 123 as unknown as string }],
    ['an array sub', { ...valid(), sub: ['alice'] as unknown as string }],
    ['an object sub', { ...valid(), sub: { id: 'alice' } as unknown as string }],
    ['an empty sub', { ...valid(), sub: '' }],
    ['no sub', { iss: DEV_ISSUER, iat: now(), exp: now() + 600 }],
    ['a sub that is no user id', { ...valid(), sub: 'a/b' }],
    ['no exp', { iss: DEV_ISSUER, sub: 'alice', iat: now() }],
    ['an exp that is a string', { ...valid(), exp: String(now() + 600) as unknown as number }],
    ['a lifetime beyond the maximum', { ...valid(), exp: now() + MAX_LIFETIME_S + 600 }],
    ['no iat and an exp beyond the maximum', { iss: DEV_ISSUER, sub: 'alice', exp: now() + MAX_LIFETIME_S + 600 }],
    ['an iat long ago with a lifetime beyond the maximum', { ...valid(), iat: now() - 10 * MAX_LIFETIME_S }],
    ['an array iss', { ...valid(), iss: [DEV_ISSUER] as unknown as string }],
    ['an aud that is a number', { ...valid(), aud: 7 as unknown as string }],
  ])('refuses a token with %s: 401 problem+json', async (_case, claims) => {
    await given(() => signed(claims))
      .when(me)
      .then((res) => {
        expect(res.status).toBe(401);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body).toMatchObject({ status: 401, title: 'Unauthorized' });
        expect(JSON.stringify(res.body)).not.toMatch(/\n\s+at /);
      });
  });

  it.each(['udp:gateway', 'udp:anything', 'UDP:Gateway'])(
    "refuses a token whose sub is in the system's own namespace (%s): 401, the service never called",
    async (sub) => {
      await given(() => signed({ ...valid(), sub }))
        .when(me)
        .then((res) => {
          expect(res.status).toBe(401);
          expect(res.body.detail).toMatch(/principal of the system/);
          expect(res.body).not.toHaveProperty('userId');
        });
    },
  );

  it('accepts the tokens `npm run token` prints (signDevToken), at the configured maximum lifetime', async () => {
    await given(() => signDevToken(secret, 'bob', MAX_LIFETIME_S))
      .when(me)
      .then((res) => expect(res.body).toEqual({ userId: 'bob' }));
    await given(() => signDevToken(secret, 'bob', MAX_LIFETIME_S + 3600))
      .when(me)
      .then((tooLong) => expect(tooLong.status).toBe(401));
  });
});
