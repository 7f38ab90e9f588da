/**
 * The embedded mode: every app in one Node process, each on its own port, sharing one in-process bus.
 * This file is the composition root of that mode (built by tools/build.mjs into dist/embedded/main.js): the
 * Nx project `embedded` (tag type:host), the one place that may import apps; apps never import each other.
 */
import { InProcessBus } from '@udp/bus';
import { loadConfig } from '@udp/config';
import { assertPortFree } from '@udp/runtime';
import { gatewayConfigSchema } from '../../apps/gateway/src/config';
import { start as startGateway } from '../../apps/gateway/src/main';
import { start as startHistory } from '../../apps/history-svc/src/main';
import { start as startPlaylist } from '../../apps/playlist-svc/src/main';
import { start as startPreference } from '../../apps/preference-svc/src/main';
import { start as startProfile } from '../../apps/profile-svc/src/main';
import { start as startCatalogue } from '../../apps/catalogue-svc/src/main';
import { start as startExportWorker } from '../../apps/export-worker/src/main';

interface Running {
  port: number;
  stop(): Promise<void>;
}

/** `announce: false` leaves out the ready block (tests that host the system in their own process). */
export async function start(env: NodeJS.ProcessEnv = process.env, { announce = true } = {}) {
  // The gateway's port is the only fixed one: check it before starting anything, so a second `npm start`
  // says which variable to set instead of failing after every service has started.
  const gatewayConfig = loadConfig(gatewayConfigSchema, env);
  await assertPortFree(gatewayConfig.PORT ?? 8080, gatewayConfig.HOST);
  const bus = new InProcessBus();
  // Services listen on loopback only, on ports the OS picks; the gateway is the one public door.
  const serviceEnv = { ...env, PORT: '0', HOST: '127.0.0.1' };
  const started: Running[] = [];
  try {
    const history = await startHistory(serviceEnv, { bus });
    started.push(history);
    const playlist = await startPlaylist(serviceEnv, { bus });
    started.push(playlist);
    const preference = await startPreference(serviceEnv, { bus });
    started.push(preference);
    const profile = await startProfile(serviceEnv, { bus });
    started.push(profile);
    const catalogue = await startCatalogue(serviceEnv, { bus });
    started.push(catalogue);
    const url = (service: { port: number }) => `http://127.0.0.1:${service.port}`;
    // The export worker reads the other services over HTTP, so it starts once they listen.
    const exportWorker = await startExportWorker(
      {
        ...serviceEnv,
        // Export addresses point at the gateway as users reach it.
        EXPORT_PUBLIC_BASE_URL: env.EXPORT_PUBLIC_BASE_URL ?? `http://localhost:${env.PORT && env.PORT !== '0' ? env.PORT : 8080}`,
        HISTORY_SVC_URL: url(history),
        PLAYLIST_SVC_URL: url(playlist),
        PREFERENCE_SVC_URL: url(preference),
        PROFILE_SVC_URL: url(profile),
      },
      { bus },
    );
    started.push(exportWorker);
    const services = {
      HISTORY_SVC_URL: history,
      PLAYLIST_SVC_URL: playlist,
      PREFERENCE_SVC_URL: preference,
      PROFILE_SVC_URL: profile,
      CATALOGUE_SVC_URL: catalogue,
      EXPORT_WORKER_URL: exportWorker,
    };
    // Each service still listens on its port (health probes, direct access); the gateway calls it in-process,
    // into the service app's router: the app itself would run a second Express start (prototypes of the request
    // and response set again, a fresh dispatch) for a request the gateway's Express already prepared.
    const gateway = await startGateway(
      { ...env, ...Object.fromEntries(Object.entries(services).map(([name, service]) => [name, url(service)])) },
      {
        inProcess: Object.fromEntries(Object.values(services).map((service) => [url(service), service.app.router])),
        internal: Object.fromEntries(Object.values(services).map((service) => [url(service), service.internal ?? {}])),
        bus,
      },
    );
    started.push(gateway);
    // After the start-up lines of every service: one block that says what to do next.
    if (announce) process.stderr.write(readyBlock(gateway.port, env.DATA_DIR));
    return {
      port: gateway.port,
      // The gateway first, then the services: requests in flight are answered before the services stop.
      shutdownTimeoutMs: gatewayConfig.SHUTDOWN_TIMEOUT_MS,
      async stop() {
        for (const app of started.reverse()) await app.stop();
        await bus.close();
      },
    };
  } catch (error) {
    for (const app of started.reverse()) await app.stop().catch(() => undefined);
    throw error;
  }
}

/** What a person needs once the system runs. The token is only valid for a system on the same DATA_DIR. */
export function readyBlock(port: number, dataDir: string | undefined): string {
  const base = `http://localhost:${port}`;
  const tokenCommand = `${dataDir ? `DATA_DIR=${dataDir} ` : ''}npm run token -- alice`;
  const rule = '─'.repeat(78);
  return [
    rule,
    ` Ready: the embedded system runs (every app in this process, data in ${dataDir ?? './data'}).`,
    '',
    `   gateway on ${base}`,
    `   docs at    ${base}/docs   (Authorize there with a token)`,
    `   health at  ${base}/health/`,
    '',
    ' A token for user "alice" (valid for a system started with the same DATA_DIR):',
    `   TOKEN=$(${tokenCommand})`,
    ` Then, e.g.:`,
    `   curl -H "Authorization: Bearer $TOKEN" ${base}/api/history/v2`,
    '',
    ' Stop with Ctrl-C; the data stays and is there at the next start.',
    rule,
    '',
  ].join('\n');
}
