import type { preferenceEvents } from '@udp/contracts';

/** The events of one preference document; schemas live in the contracts library. */
export type PreferenceEvent = preferenceEvents.PreferenceEvent;
export type PreferenceWritten = Extract<PreferenceEvent, { type: 'PreferenceWritten' }>;
export type PreferenceDeleted = Extract<PreferenceEvent, { type: 'PreferenceDeleted' }>;
export type PreferenceOperation = preferenceEvents.PreferenceOperation;

export const PREFERENCE_STREAM_PREFIX = 'preference-';

/**
 * One stream per user and key. A key may hold any character (slashes, colons, spaces...), so it is
 * base64url-encoded: stream names stay safe for every event store. User ids are opaque.
 */
export const preferenceStreamId = (userId: string, key: string) =>
  `${PREFERENCE_STREAM_PREFIX}${userId}-${Buffer.from(key, 'utf8').toString('base64url')}`;

/**
 * The user id of a stream whose key we know (events carry it). base64url uses `-` too, so the id is not
 * split on a dash: the known encoded key is cut off the end instead.
 */
export function userIdOfPreferenceStream(streamId: string, key: string): string {
  const suffix = `-${Buffer.from(key, 'utf8').toString('base64url')}`;
  if (!streamId.startsWith(PREFERENCE_STREAM_PREFIX) || !streamId.endsWith(suffix)) throw new Error(`stream ${streamId} is not the stream of key ${key}`);
  return streamId.slice(PREFERENCE_STREAM_PREFIX.length, streamId.length - suffix.length);
}

/** Maps stored events to the current shapes. All events are still at version 1, so this is the identity. */
export function upcast(type: string, data: Record<string, unknown>): PreferenceEvent {
  return { type, data } as PreferenceEvent;
}
