import { startTestSystem, type TestSystem } from '@udp/test-system';
import { type PreferenceServiceDeps, createPreferenceService } from '../app';

/** Test support (used by the *.api.spec.ts files only): the gateway and preference-svc, and two users. */
export const P = '/api/preference';

export interface PreferenceSystem {
  system: TestSystem;
  /** Authorization headers of alice and bob. */
  alice: string;
  bob: string;
}

/** Starts the gateway and preference-svc on memory adapters, with `options` over the service's defaults. */
export async function startPreferenceSystem(
  options: Pick<PreferenceServiceDeps, 'limits' | 'maxBodyBytes'> = {},
): Promise<PreferenceSystem> {
  const system = await startTestSystem([{ prefixes: [P], create: (deps) => createPreferenceService({ ...deps, ...options }) }]);
  return { system, alice: await system.auth('alice'), bob: await system.auth('bob') };
}

/** A request with a JSON body, as a client sends it: `put(auth, path, body)`. */
export const jsonRequest = (system: () => TestSystem, method: 'put' | 'post') => (auth: string, path: string, body: unknown) =>
  system().http[method](path).set('authorization', auth).set('content-type', 'application/json').send(JSON.stringify(body));
