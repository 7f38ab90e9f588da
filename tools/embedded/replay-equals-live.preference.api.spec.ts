import { createPreferenceService } from '../../apps/preference-svc/src/app';
import { replayEqualsLive } from './testing/replay-equals-live';
import { preferencesMix } from './testing/replay-services';

// preference-svc's random interleavings, replayed against its live read models (testing/replay-equals-live.ts).
replayEqualsLive({ ...preferencesMix, create: (deps) => createPreferenceService(deps) });
