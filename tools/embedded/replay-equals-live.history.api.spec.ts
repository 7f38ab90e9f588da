import { createHistoryService } from '../../apps/history-svc/src/app';
import { replayEqualsLive } from './testing/replay-equals-live';
import { historyMix } from './testing/replay-services';

// history-svc's random interleavings, replayed against its live read models (testing/replay-equals-live.ts).
replayEqualsLive({ ...historyMix, create: (deps) => createHistoryService(deps) });
