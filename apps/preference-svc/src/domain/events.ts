import type { preferenceEvents } from '@udp/contracts';
import { STREAM_CATEGORIES, ownedStream, preferenceStreamId } from '@udp/eventsourcing';

/**
 * The events of one preference document. Their schemas are in libs/contracts/src/events/preference.ts, with every event schema
 * (docs/architecture.md, "Event sourcing rules").
 */
export type PreferenceEvent = preferenceEvents.PreferenceEvent;
export type PreferenceWritten = Extract<PreferenceEvent, { type: 'PreferenceWritten' }>;
export type PreferenceDeleted = Extract<PreferenceEvent, { type: 'PreferenceDeleted' }>;
export type PreferenceOperation = preferenceEvents.PreferenceOperation;

export const PREFERENCE_STREAM_PREFIX = STREAM_CATEGORIES.preference;

/**
 * One stream per user and key: `preference.v2-<userId>/<key>`, both parts encoded (libs/eventsourcing streams.ts),
 * so no two (user, key) pairs share a stream, and every event records its owner (`{ userId, key }`).
 */
export { preferenceStreamId };
export const preferenceStream = (userId: string, key: string) => ownedStream(preferenceStreamId(userId, key), { userId, key });

/**
 * The former names, `preference-<userId>-<base64url(key)>`, were ambiguous: user `u` with key `ab>settings` and
 * user `u-YWI` with key `settings` shared a stream. Read only to migrate them (see migrations/legacy-streams.ts).
 */
export const LEGACY_PREFERENCE_STREAM_PREFIX = STREAM_CATEGORIES.legacyPreference;
export const legacyPreferenceStreamId = (userId: string, key: string) =>
  `${LEGACY_PREFERENCE_STREAM_PREFIX}${userId}-${Buffer.from(key, 'utf8').toString('base64url')}`;

/**
 * The user who wrote an event of a former stream, from the stream name and the key the event carries (a name and a
 * key give one user: the known encoded key is cut off the end). Null when the name does not end with that key.
 */
export function legacyOwnerOf(streamId: string, key: string): string | null {
  const suffix = `-${Buffer.from(key, 'utf8').toString('base64url')}`;
  if (!streamId.startsWith(LEGACY_PREFERENCE_STREAM_PREFIX) || !streamId.endsWith(suffix)) return null;
  const userId = streamId.slice(LEGACY_PREFERENCE_STREAM_PREFIX.length, streamId.length - suffix.length);
  return userId || null;
}

/** Maps stored events to the current shapes. All events are still at version 1, so this is the identity. */
export function upcast(type: string, data: Record<string, unknown>): PreferenceEvent {
  return { type, data } as PreferenceEvent;
}
