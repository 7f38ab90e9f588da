import type { EndpointItem, FullPlaylistV3, History } from '@udp/contracts';
import { getJson, type ServiceCall } from './service-client';

export interface ServiceUrls {
  history: string;
  playlist: string;
}

export interface ComponentContext {
  services: ServiceUrls;
  /** The caller's user id from the token; absent for an anonymous call. Never taken from the query. */
  userId?: string;
  size: number;
  call: ServiceCall;
}

export interface Component {
  /** Personal components read the caller's own data and need a token. */
  personal: boolean;
  run(context: ComponentContext): Promise<EndpointItem[]>;
}

/** A page of the caller's history, newest first (read through history-svc's API as the caller). */
async function history(context: ComponentContext, limit: number): Promise<History> {
  return getJson<History>(context.services.history, `/api/history/v2?limit=${limit}`, context.call);
}

/** Built-in components; an endpoint names them in its configuration. */
export const BUILT_IN_COMPONENTS: Record<string, Component> = {
  /** Items the user started and has not deleted, newest first (entries with a playback position). */
  'continue-watching': {
    personal: true,
    async run(context) {
      // History lists exclude deleted entries unless asked; a bounded read keeps this cheap.
      const page = await history(context, 1000);
      return page.data
        .filter((i) => !i.deleted && typeof i.last_playback_position === 'number' && i.last_playback_position > 0)
        .slice(0, context.size)
        .map((i) => ({ item_id: i.item_id, date: i.date, last_playback_position: i.last_playback_position }));
    },
  },
  /** The user's history, newest first. */
  'recently-watched': {
    personal: true,
    async run(context) {
      const page = await history(context, context.size);
      return page.data
        .filter((i) => !i.deleted)
        .slice(0, context.size)
        .map((i) => ({ item_id: i.item_id, date: i.date }));
    },
  },
  /** The user's watch-later playlist, newest first (an empty list before the first bookmark). */
  'watch-later': {
    personal: true,
    async run(context) {
      const playlist = await getJson<FullPlaylistV3>(context.services.playlist, '/api/playlist/v3/watch_later', context.call).catch(
        (error: { status?: number }) => {
          if (error.status === 404) return { bookmarks: [] } as unknown as FullPlaylistV3;
          throw error;
        },
      );
      return playlist.bookmarks.slice(0, context.size).map((b) => ({ item_id: b.itemId, date: b.date }));
    },
  },
  /** Most-watched items over history-svc's window, only those watched by at least TRENDING_MIN_USERS users. */
  trending: {
    personal: false,
    async run(context) {
      const answer = await getJson<{ items: Array<{ item_id: string; users: number; date: number }> }>(
        context.services.history,
        `/internal/history/trending?size=${context.size}`,
        context.call,
      );
      return answer.items.map((i) => ({ item_id: i.item_id, users: i.users, date: i.date }));
    },
  },
};

/** The built-in component of that name; undefined for any other (own names only: `constructor` is not one). */
export function builtInComponent(name: string): Component | undefined {
  return Object.hasOwn(BUILT_IN_COMPONENTS, name) ? BUILT_IN_COMPONENTS[name] : undefined;
}
