import http from 'node:http';
import express from 'express';
import { waitUntil } from '@udp/test-kit';
import { closeServer, listen } from './server';

/** A stop answers the requests in flight, takes no new connection, and does not wait out the keep-alive timeout. */
describe('closeServer', () => {
  it('finishes the request in flight, refuses new connections, and closes a kept-alive connection once idle', async () => {
    // Given a server whose only route takes 300 ms, and a client keeping its connection alive
    const app = express();
    let arrived = false;
    app.get('/slow', (_req, res) => {
      arrived = true;
      setTimeout(() => res.json({ done: true }), 300);
    });
    const { server, port } = await listen(app, 0, '127.0.0.1', {
      headersTimeoutMs: 15_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 0,
    });
    const agent = new http.Agent({ keepAlive: true });
    const get = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/slow', agent }, (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          })
          .on('error', reject);
      });
    const inFlight = get();
    // In flight once its handler runs (polled: a fixed 50 ms may not be enough on a loaded machine).
    await waitUntil(() => arrived, 5000, 'the request at its handler');

    // When the server stops
    const began = Date.now();
    const stopped = closeServer(server);

    // Then a new connection is refused, the request in flight is answered, and the stop ends right after it
    await expect(
      new Promise((resolve, reject) => http.get({ host: '127.0.0.1', port, path: '/slow' }, resolve).on('error', reject)),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(await inFlight).toEqual({ status: 200, body: '{"done":true}' });
    await stopped;
    const stopMs = Date.now() - began;
    process.stdout.write(`[graceful-stop] stop_ms=${stopMs} (a 300 ms request in flight; target: stop_ms < 2000)\n`);
    // What holds on any machine, busy or not: the stop did not wait out the 65 s keep-alive of the idle connection.
    expect(stopMs).toBeLessThan(10_000);
    agent.destroy();
  });
});
