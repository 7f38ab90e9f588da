/**
 * The embedded mode: every app in one Node process, each on its own port, sharing one in-process bus.
 * This file is the composition root of that mode (built by tools/build.mjs into dist/embedded/main.js): the
 * Nx project `embedded` (tag type:host), the one place that may import apps; apps never import each other.
 */
import { InProcessBus } from '@udp/bus';
import { start as startGateway } from '../../apps/gateway/src/main';
import { start as startHistory } from '../../apps/history-svc/src/main';
import { start as startPlaylist } from '../../apps/playlist-svc/src/main';
import { start as startPreference } from '../../apps/preference-svc/src/main';
import { start as startProfile } from '../../apps/profile-svc/src/main';
import { start as startCatalogue } from '../../apps/catalogue-svc/src/main';

interface Running {
  port: number;
  stop(): Promise<void>;
}

export async function start(env: NodeJS.ProcessEnv = process.env) {
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
    const services = { HISTORY_SVC_URL: history, PLAYLIST_SVC_URL: playlist, PREFERENCE_SVC_URL: preference, PROFILE_SVC_URL: profile, CATALOGUE_SVC_URL: catalogue };
    // Each service still listens on its port (health probes, direct access); the gateway calls it in-process.
    const gateway = await startGateway(
      { ...env, ...Object.fromEntries(Object.entries(services).map(([name, service]) => [name, url(service)])) },
      { inProcess: Object.fromEntries(Object.values(services).map((service) => [url(service), service.app])) },
    );
    started.push(gateway);
    process.stderr.write(
      `embedded: gateway on http://localhost:${gateway.port} (docs: /docs); get a token with: npm run token -- <userId>\n`,
    );
    return {
      port: gateway.port,
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

