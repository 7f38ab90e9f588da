import express from 'express';
import { acceptFromGateway, requireCaller, userIdOf } from '@udp/http-kit';
import { startTestSystem } from './system';

it('runs a service behind an authenticating gateway on memory adapters', async () => {
  const system = await startTestSystem([
    {
      prefixes: ['/api/echo'],
      create: async (deps) => {
        const app = express();
        app.get('/api/echo', acceptFromGateway(deps.identity), requireCaller, (_req, res) => res.json({ user: userIdOf(res) }));
        return { app, stop: async () => undefined };
      },
    },
  ]);
  try {
    expect((await system.http.get('/api/echo').set('authorization', await system.auth('zoe'))).body).toEqual({ user: 'zoe' });
    expect((await system.http.get('/api/echo')).status).toBe(401);
  } finally {
    await system.stop();
  }
});
