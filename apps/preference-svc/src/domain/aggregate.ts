import { preferenceEvents } from '@udp/contracts';
import { type Aggregate, type OwnedStream, encodeIdPart, joinIdParts, oneStreamPerUser, splitIdParts } from '@udp/eventsourcing';
import type { DocumentLimits } from './json-document';
import { type PreferenceCommand, type PreferenceQuotas, type PreferenceState, preferenceDecider } from './decider';
import { type PreferenceQuotaCommand, type PreferenceQuotaState, preferenceQuotaDecider } from './quota-decider';

/**
 * The events of one preference document. Their schemas are in libs/contracts/src/events/preference.ts, with every event schema
 * (docs/architecture.md, "Event sourcing rules").
 */
export type PreferenceEvent = preferenceEvents.PreferenceEvent;
export type PreferenceOperation = preferenceEvents.PreferenceOperation;
export type PreferenceQuotaEvent = preferenceEvents.PreferenceQuotaEvent;

/** A preference document: one user's document under one key. */
export interface PreferenceId {
  userId: string;
  key: string;
}

const CATEGORY = 'preference.v2-';

/**
 * One stream per user and key: `preference.v2-<userId>/<key>`, both parts encoded (libs/eventsourcing streams.ts),
 * so no two (user, key) pairs share a stream; every event records its owner (`{ userId, key }`) and is parsed by
 * its schema on read. What the projection reads the aggregate by.
 */
export const preferenceStreams = {
  category: CATEGORY,
  streamOf: ({ userId, key }: PreferenceId): OwnedStream => ({ id: CATEGORY + joinIdParts(userId, key), owner: { userId, key } }),
  idOf(streamId: string): PreferenceId {
    const parts = streamId.startsWith(CATEGORY) ? splitIdParts(streamId.slice(CATEGORY.length), 2) : null;
    if (!parts) throw new Error(`${streamId} is not a preference stream`);
    return { userId: parts[0], key: parts[1] };
  },
  events: preferenceEvents.PreferenceEvent,
};
export const preferenceStream = (userId: string, key: string) => preferenceStreams.streamOf({ userId, key });
export const preferenceStreamId = (userId: string, key: string) => preferenceStream(userId, key).id;
/** Prefix of every preference stream of one user and of no other (erasure and export find them by it). */
export const preferenceStreamPrefixOf = (userId: string) => `${CATEGORY}${encodeIdPart(userId)}/`;

/**
 * A preference document as an aggregate. Path writes are decided on the document as it is now, so a write that
 * lost a race is re-read and re-applied to the new document `conflictRetries` times, then 429.
 */
export const preferenceAggregate = (
  limits: DocumentLimits & PreferenceQuotas,
  conflictRetries: number,
): Aggregate<PreferenceCommand, PreferenceEvent, PreferenceState, PreferenceId> => ({
  ...preferenceStreams,
  decider: preferenceDecider(limits),
  conflictRetries,
});

/**
 * One quota stream per user, `preference-quota-<userId>`: the claims of the writes that grow the user's preferences
 * (quota-decider.ts). Its events name keys, so it is the user's data: erased with the user's key streams.
 */
export const preferenceQuotaStreams = { ...oneStreamPerUser('preference-quota-'), events: preferenceEvents.PreferenceQuotaEvent };
export const preferenceQuotaStreamId = (userId: string) => preferenceQuotaStreams.streamOf(userId).id;

/** The quotas of a user's preferences as an aggregate: a claim that lost a race is re-decided `conflictRetries` times, then 429. */
export const preferenceQuotaAggregate = (
  quotas: PreferenceQuotas,
  conflictRetries: number,
): Aggregate<PreferenceQuotaCommand, PreferenceQuotaEvent, PreferenceQuotaState, string> => ({
  ...preferenceQuotaStreams,
  decider: preferenceQuotaDecider(quotas),
  conflictRetries,
});
