import { startTestSystem, type TestSystem } from '@udp/test-system';
import { type HistoryServiceDeps, createHistoryService } from '../app';

/** Test support (used by the *.api.spec.ts files only): the gateway and history-svc on a clock, and two users. */
export const T0 = 1_700_000_000_000;

/** What a spec works on, fresh for every test. */
export interface HistorySystem {
  system: TestSystem;
  /** What history-svc takes as now; back at T0 before every test. */
  clock: { now: number };
  /** Authorization headers of alice and bob. */
  alice: string;
  bob: string;
}

/** Starts the gateway and history-svc before each test of the file and stops them after. */
export function historySystemPerTest(options: Partial<Pick<HistoryServiceDeps, 'maxBodyBytes' | 'maxEntries'>> = {}): HistorySystem {
  const s = { clock: { now: T0 } } as HistorySystem;
  beforeEach(async () => {
    s.clock.now = T0;
    s.system = await startTestSystem([
      { prefixes: ['/api/history'], create: (deps) => createHistoryService({ ...deps, ...options, now: () => s.clock.now }) },
    ]);
    s.alice = await s.system.auth('alice');
    s.bob = await s.system.auth('bob');
  });
  afterEach(() => s.system.stop());
  return s;
}
