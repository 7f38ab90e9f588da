import { PLAYLIST_LIMITS } from '@udp/contracts';
import { commonConfigSchema, z } from '@udp/config';

/** playlist-svc's settings: the common ones, and its limits (docs/playlist-svc.md). */
export const playlistConfigSchema = commonConfigSchema.extend({
  /** Standard playlists per user (watch later does not count); past it, creating one answers 422 Quota Exceeded. */
  PLAYLIST_MAX_PLAYLISTS: z.coerce.number().int().min(1).max(10_000).default(PLAYLIST_LIMITS.maxPlaylists),
  /** Bookmarks per playlist; past it, adding answers 422 Quota Exceeded. */
  PLAYLIST_MAX_BOOKMARKS: z.coerce.number().int().min(1).max(100_000).default(PLAYLIST_LIMITS.maxBookmarks),
  /** Re-reads and re-decisions when another request changed the user's playlists meanwhile; then 429. */
  PLAYLIST_CONFLICT_RETRIES: z.coerce.number().int().min(0).max(100).default(10),
});
export type PlaylistConfig = z.infer<typeof playlistConfigSchema>;
