import { createPlaylistService } from '../../apps/playlist-svc/src/app';
import { replayEqualsLive } from './testing/replay-equals-live';
import { playlistsMix } from './testing/replay-services';

// playlist-svc's random interleavings, replayed against its live read models (testing/replay-equals-live.ts).
replayEqualsLive({ ...playlistsMix, create: (deps) => createPlaylistService(deps) });
