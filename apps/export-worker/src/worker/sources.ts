import { type FullPlaylistV3, type History, PROFILE_NO_CREATE_HEADER, type Profile, type RetrievedPlaylistsV3 } from '@udp/contracts';
import { IDENTITY_HEADER, type InternalIdentity } from '@udp/auth';
import type { ExportArea } from './zip';

/** Where the services are: the worker asks them over HTTP, never reading their stores. */
export interface SourceUrls {
  history: string;
  playlist: string;
  preference: string;
  profile: string;
}

export class SourceError extends Error {
  override readonly name = 'SourceError';
}

/** History pages of this size: 100,000 entries are 100 requests, and one page is all that is ever in memory. */
const HISTORY_PAGE = 1000;

/**
 * The areas of a user's export, read through each service's own API with an identity signed as the gateway
 * signs it: the export holds exactly what the API shows that user. Reads only: the profile is asked with
 * PROFILE_NO_CREATE_HEADER (a user without a profile gets `null` in profile.json, and still has none afterwards).
 * `signal` aborts every read (an erasure cancels the export).
 */
export function userDataAreas(
  urls: SourceUrls | (() => SourceUrls),
  identity: InternalIdentity,
  userId: string,
  requestId: string,
  signal?: AbortSignal,
): ExportArea[] {
  const base = () => (typeof urls === 'function' ? urls() : urls);
  const get = async <T>(service: keyof SourceUrls, path: string, allowNotFound = false): Promise<T | null> => {
    const timeout = AbortSignal.timeout(30_000);
    const res = await fetch(`${base()[service].replace(/\/$/, '')}${path}`, {
      headers: {
        [IDENTITY_HEADER]: identity.sign({ userId }),
        [PROFILE_NO_CREATE_HEADER]: '1',
        'x-request-id': requestId,
        accept: 'application/json',
      },
      signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
    }).catch((error: Error) => {
      throw new SourceError(`${service} unreachable: ${error.message}`);
    });
    if (allowNotFound && res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new SourceError(`${service} answered ${res.status} for ${path.split('?')[0]}`);
    }
    return (await res.json()) as T;
  };

  async function* history(): AsyncGenerator<unknown[]> {
    let query: string | undefined = `?with_deleted=true&limit=${HISTORY_PAGE}`;
    while (query) {
      const page: History = (await get<History>('history', `/api/history/v2${query}`))!;
      yield page.data;
      query = page.next;
    }
  }

  async function* playlists(): AsyncGenerator<unknown[]> {
    const list = (await get<RetrievedPlaylistsV3>('playlist', '/api/playlist/v3'))!;
    const ids = list.playlists.map((p) => p.businessId);
    // Watch later is part of the export even when the listing leaves out one never used.
    if (!ids.includes('watch_later')) ids.unshift('watch_later');
    for (const id of ids) {
      const playlist = await get<FullPlaylistV3>('playlist', `/api/playlist/v3/${encodeURIComponent(id)}`, true);
      if (playlist) yield [playlist];
    }
  }

  async function* preferences(): AsyncGenerator<Array<[string, unknown]>> {
    const keys = (await get<string[]>('preference', '/api/preference'))!;
    for (const key of keys) {
      const document = await get<unknown>('preference', `/api/preference/${encodeURIComponent(key)}`, true);
      if (document !== null) yield [[key, document]];
    }
  }

  return [
    { file: 'history.json', kind: 'array', items: history() },
    { file: 'playlists.json', kind: 'array', items: playlists() },
    { file: 'preferences.json', kind: 'object', entries: preferences() },
    { file: 'profile.json', kind: 'value', value: () => get<Profile>('profile', '/api/profile/v3', true) },
  ];
}
