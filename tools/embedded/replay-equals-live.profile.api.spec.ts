import { createProfileService } from '../../apps/profile-svc/src/app';
import { replayEqualsLive } from './testing/replay-equals-live';
import { profileMix } from './testing/replay-services';

// profile-svc's random interleavings, replayed against its live read models (testing/replay-equals-live.ts).
replayEqualsLive({ ...profileMix, create: (deps) => createProfileService(deps) });
