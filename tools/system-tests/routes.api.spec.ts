import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { Authenticator, DEV_ISSUER } from '@udp/auth';
import { PUBLIC_ROUTES } from '@udp/contracts';
import { InProcessBus } from '@udp/bus';
import { ChangeHub, CursorCodec, TicketIssuer, changesRouter, createGateway } from '@udp/gateway-core';
import { personalisationRouter } from '@udp/personalisation';
import { closeServer, listen } from '@udp/runtime';
import { given } from '@udp/test-kit';
import type { TestSystem } from '@udp/test-system';
import { startWholeSystem } from './whole-system';

/**
 * Every route of the contracts' tables (the routes the OpenAPI document is made from) is mounted by some service:
 * a request on its method and path reaches a handler. Without one, the gateway or the service answers 404 "no route
 * for ..." (or 405 when the method is not documented there). The whole system serves the services' routes; the
 * gateway's own routes (personalisation from libs/personalisation, live sync from libs/gateway-core) are here on a
 * gateway of their own.
 */
let system: TestSystem;
let personalisation: Server;
let apps: Array<ReturnType<typeof request>>;
let auth: string;
beforeAll(async () => {
  system = await startWholeSystem();
  const { identity, logger } = system.deps[0];
  const authenticator = new Authenticator({ jwtSecret: randomBytes(32).toString('base64url'), issuer: DEV_ISSUER });
  const cursors = new CursorCodec(identity.derivedKey('changes-cursor'));
  const hub = new ChangeHub({
    bus: new InProcessBus(),
    historyUrl: system.gatewayUrl,
    playlistUrl: system.gatewayUrl,
    preferenceUrl: system.gatewayUrl,
    profileUrl: system.gatewayUrl,
    identity,
    cursors,
    logger,
    limits: { heartbeatS: 15, maxStreamsPerUser: 10, maxStreams: 0, maxBufferBytes: 65536 },
  });
  const gateway = createGateway({
    routes: [],
    identity,
    authenticator,
    logger,
    routers: [
      personalisationRouter({
        config: { codops: {} },
        secrets: new Map(),
        services: { history: '', playlist: '' },
        identity,
        authenticator,
      }),
      changesRouter({ hub, tickets: new TicketIssuer(identity.derivedKey('changes-ticket')), cursors, authenticator }),
    ],
  });
  let port: number;
  ({ server: personalisation, port } = await listen(gateway, 0, '127.0.0.1'));
  apps = [system.http, request(`http://127.0.0.1:${port}`)];
  auth = await system.auth('route-prober');
});
afterAll(async () => {
  await closeServer(personalisation);
  await system.stop();
});

/** Each path parameter filled with a value that may be invalid: a 400 or 404 from the handler still shows it is mounted. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'x');
const unrouted = (res: { status: number; body?: { detail?: unknown } }) =>
  res.status === 405 || (res.status === 404 && String(res.body?.detail).startsWith('no route for'));
/** The whole system and the personalisation gateway, started once for the file: the state every test here reads. */
const started = () => undefined;

it.each(PUBLIC_ROUTES.map((r) => [r.method.toUpperCase(), r.path, r] as const))('%s %s is mounted', async (_method, _path, route) => {
  await given(started)
    .when(async () => {
      // The whole system first, then the personalisation gateway, until one routes the request: every answer.
      const answers = [];
      for (const app of apps) {
        const res = await app[route.method](concrete(route.path)).set('authorization', auth);
        answers.push(res);
        if (!unrouted(res)) break;
      }
      return answers;
    })
    .then((answers) => {
      const routed = answers.find((res) => !unrouted(res));
      if (!routed) {
        const seen = answers.map((res) => `${res.status} ${res.body?.detail ?? ''}`);
        throw new Error(`no service mounts ${route.method.toUpperCase()} ${route.path}: ${seen.join(' | ')}`);
      }
      expect(routed.status).toBeLessThan(500);
    });
});
