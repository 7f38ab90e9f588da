import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileSecret, signDevToken } from '@udp/auth';
import { given, unzip, waitUntil } from '@udp/test-kit';
import { start } from '../host';

/**
 * The export flow as a user meets it: every app started by the embedded host (one process), data written
 * through the gateway, an export requested with a callback to a local receiver, the signature checked, the zip
 * downloaded and unzipped, every file compared with what the APIs answer, then erasure. `env` chooses the
 * adapters: nothing (embedded: SQLite, memory, in-process bus) or MONGO_URL and KAFKA_BROKERS (distributed).
 */
export function exportFlow(
  name: string,
  env: NodeJS.ProcessEnv,
  storedZips: (dataDir: string) => Promise<number>,
  timeoutMs = 60_000,
  historyItems = 1200,
) {
  describe(name, () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'udp-export-e2e-'));
    let system: { port: number; stop(): Promise<void> };
    let receiver: Server;
    const callbacks: Array<{ body: string; signature: string }> = [];
    let base: string;
    let auth: Record<string, string>;

    beforeAll(async () => {
      receiver = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          callbacks.push({ body, signature: String(req.headers['x-signature']) });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      const receiverPort = (receiver.address() as { port: number }).port;
      system = await start({
        ...env,
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        EXPORT_CALLBACK_HOSTS: `http://127.0.0.1:${receiverPort}`,
        // The other participants confirm once their own erasure is built; here the export-worker alone.
        ERASURE_PARTICIPANTS: 'export-worker',
      });
      base = `http://127.0.0.1:${system.port}`;
      auth = {
        authorization: `Bearer ${await signDevToken(fileSecret(dataDir, 'jwt-signing'), 'user-with-dash')}`,
        'content-type': 'application/json',
      };
    }, timeoutMs);
    // As long as the start may take: with Kafka, every consumer (the gateway's live sync has three) leaves its group.
    afterAll(async () => {
      await system?.stop();
      await new Promise((r) => receiver.close(r));
      rmSync(dataDir, { recursive: true, force: true });
    }, timeoutMs);

    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) });
      if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.status === 204 ? null : res.json();
    };

    it(
      "exports all of a user's data: callback signed, zip downloadable, every file equal to what the APIs answer",
      async () => {
        // A large batch is acknowledged once stored; a slow read model (FerretDB) may still be applying it.
        const allHistory = async () => {
          const found: Array<{ deleted: boolean }> = [];
          for (let query: string | undefined = '?with_deleted=true&limit=1000'; query;) {
            const page = (await call('GET', `/api/history/v2${query}`)) as { data: Array<{ deleted: boolean }>; next?: string };
            found.push(...page.data);
            query = page.next;
          }
          return found;
        };
        /** The status the export-worker delivered to the callback receiver. */
        const delivered = () =>
          JSON.parse(callbacks[0].body) as { key: string; status: string; url: string; publicUrl: string; size: number };

        await given(async () => {
          // History entries (1,200 embedded: two pages), one deleted; playlists incl. watch later; preferences; profile.
          const items = Array.from({ length: historyItems }, (_, i) => ({
            item_id: `urn:item:${i}`,
            date: 1_000_000 + i,
            last_playback_position: i / 2,
          }));
          await call('POST', '/api/history/v2/batch', { data: items });
          await call('DELETE', '/api/history/v2/urn:item:7');
          await call('POST', '/api/playlist/v3/new/bookmarks', { businessId: 'road-trip', itemId: 'urn:item:1', name: 'Road trip' });
          await call('POST', '/api/playlist/v3/watch_later/bookmarks', { itemId: 'urn:item:2' });
          await call('PUT', '/api/preference/ui', { theme: 'dark', volume: 7 });
          await call('PUT', '/api/preference/favorites', { shows: ['urn:show:1'] });
          await call('PUT', '/api/profile/v3', { displayName: 'Dash', language: 'fr-CH' });
          await waitUntil(async () => (await allHistory()).filter((i) => i.deleted).length === 1, timeoutMs / 2, 'history projected');
        })
          .when(
            async () =>
              (await call('POST', '/api/data/export', {
                fileName: 'mine',
                callbackUrl: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/export-ready`,
              })) as Record<string, string>,
          )
          .then(async (requested) => {
            expect(requested).toMatchObject({ status: 'pending', fileName: 'mine.zip' });
            await waitUntil(() => callbacks.length > 0, timeoutMs / 2, 'callback');
            const callback = callbacks[0];
            const secret = fileSecret(dataDir, 'export-callback');
            expect(callback.signature).toBe(`sha256=${createHmac('sha256', secret).update(callback.body).digest('hex')}`);
            expect(delivered()).toMatchObject({ key: requested.key, status: 'ready' });
          });

        // The addresses name the gateway as users reach it; here it listens on a port of its own.
        await given(delivered)
          .when(async (status) => {
            const zipRes = await fetch(`${base}${new URL(status.publicUrl).pathname}`);
            return { zipRes, zip: Buffer.from(await zipRes.arrayBuffer()) };
          })
          .then(async ({ zipRes, zip }, status) => {
            expect(zipRes.status).toBe(200);
            expect(zipRes.headers.get('content-disposition')).toBe('attachment; filename=mine.zip');
            expect(zip.length).toBe(status.size);
            const own = await fetch(`${base}${new URL(status.url).pathname}`, { headers: auth });
            expect(Buffer.compare(Buffer.from(await own.arrayBuffer()), zip)).toBe(0);
            expect((await fetch(`${base}${new URL(status.url).pathname}`)).status).toBe(401);

            const files = await unzip(zip);
            const json = (name: string) => JSON.parse(files.get(name)!.toString('utf8'));

            const history = await allHistory();
            expect(history).toHaveLength(historyItems);
            expect(json('history.json')).toEqual(history);
            expect(json('history.json').filter((i: { deleted: boolean }) => i.deleted)).toHaveLength(1);

            const list = (await call('GET', '/api/playlist/v3')) as { playlists: Array<{ businessId: string }> };
            const playlists = [];
            for (const p of list.playlists) playlists.push(await call('GET', `/api/playlist/v3/${p.businessId}`));
            expect(json('playlists.json')).toEqual(playlists);
            expect(playlists.map((p) => (p as { businessId: string }).businessId).sort()).toEqual(['road-trip', 'watch_later']);

            const keys = (await call('GET', '/api/preference')) as string[];
            const preferences: Record<string, unknown> = {};
            for (const key of keys) preferences[key] = await call('GET', `/api/preference/${key}`);
            expect(json('preferences.json')).toEqual(preferences);
            expect(Object.keys(preferences).sort()).toEqual(['favorites', 'ui']);

            expect(json('profile.json')).toEqual(await call('GET', '/api/profile/v3'));
            expect(json('manifest.json')).toMatchObject({
              formatVersion: 1,
              userId: 'user-with-dash',
              files: { 'history.json': { count: historyItems }, 'playlists.json': { count: 2 } },
            });
          });

        // The status records the delivered callback; listing, deleting and erasing behave as documented.
        await given(async () => {
          await waitUntil(
            async () =>
              ((await call('GET', '/api/data/export')) as Array<{ callback?: { status: string } }>)[0].callback?.status === 'delivered',
          );
          expect(await storedZips(dataDir)).toBe(1);
          return delivered();
        })
          .when(() => fetch(`${base}/api/data`, { method: 'DELETE', headers: auth }))
          .then(async (erased, status) => {
            expect(erased.status).toBe(204);
            expect(await call('GET', '/api/data/export')).toEqual([]);
            expect(await storedZips(dataDir)).toBe(0);
            expect((await fetch(`${base}${new URL(status.publicUrl).pathname}`)).status).toBe(404);
          });
      },
      timeoutMs,
    );
  });
}
