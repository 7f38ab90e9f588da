import type { Bus } from '@udp/bus';
import type { EventStore } from '@udp/eventstore';
import type { ReadModelStore } from '@udp/readmodel';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { type PlaylistServiceDeps, createPlaylistService } from '../app';

/** Test support (used by the *.api.spec.ts files only): the gateway and playlist-svc, a clock, and users. */
export const T0 = 1_700_000_000_000;

export type Options = Partial<Pick<PlaylistServiceDeps, 'limits' | 'conflictRetries' | 'newId' | 'maxBodyBytes' | 'writesSideBySide'>> & {
  store?: EventStore;
  readModels?: ReadModelStore;
  bus?: Bus;
};

export interface PlaylistSystem {
  system: TestSystem;
  clock: { now: number };
  /** A user's requests through the gateway, authenticated as that user. */
  as(userId: string): Promise<UserClient>;
  stop(): Promise<void>;
}

export type UserClient = ReturnType<typeof client>;

function client(system: TestSystem, auth: string) {
  const json = (req: ReturnType<TestSystem['http']['post']>, body: unknown) =>
    body === undefined ? req : req.set('content-type', 'application/json').send(JSON.stringify(body));
  return {
    get: (path: string) => system.http.get(path).set('authorization', auth),
    post: (path: string, body?: unknown) => json(system.http.post(path).set('authorization', auth), body),
    put: (path: string, body?: unknown) => json(system.http.put(path).set('authorization', auth), body),
    delete: (path: string) => system.http.delete(path).set('authorization', auth),
  };
}

export async function startPlaylistSystem(options: Options = {}): Promise<PlaylistSystem> {
  const clock = { now: T0 };
  const { store, readModels, bus, ...deps } = options;
  const system = await startTestSystem([
    {
      prefixes: ['/api/playlist'],
      adapters: { store, readModels, bus },
      create: (base) => createPlaylistService({ ...base, now: () => clock.now, ...deps }),
    },
  ]);
  return {
    system,
    clock,
    as: async (userId) => client(system, await system.auth(userId)),
    stop: () => system.stop(),
  };
}

/** A deterministic technical-id source: p1, p2, ... */
export function sequentialIds(prefix = 'p'): () => string {
  let n = 0;
  return () => `${prefix}${++n}`;
}
