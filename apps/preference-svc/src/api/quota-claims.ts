import { randomUUID } from 'node:crypto';
import { type BeforeAppend, type CommandHandler, DomainError, currentState, domainEventOf } from '@udp/eventsourcing';
import { type EventStore, WrongExpectedRevisionError } from '@udp/eventstore';
import type { Collection } from '@udp/readmodel';
import {
  type PreferenceEvent,
  type PreferenceId,
  type PreferenceQuotaEvent,
  preferenceQuotaAggregate,
  preferenceStream,
  preferenceStreams,
} from '../domain/aggregate';
import type { PreferenceState } from '../domain/decider';
import { documentBytes } from '../domain/json-document';
import { type ClaimGrowth, type KeySize, type PreferenceQuotaState, openClaims } from '../domain/quota-decider';
import { keySizes } from '../projections/preference-queries';
import type { PreferenceDocumentRow, PreferenceKeyRow } from '../projections/preferences';

/**
 * A claim older than this whose write has not landed is taken for abandoned (its writer was killed, or its append
 * failed) and fenced when it stands between a user and a write. Fencing a write still in flight only makes it retry.
 */
export const OPEN_CLAIM_TTL_MS = 10_000;

export interface QuotaClaimsDeps {
  store: EventStore;
  keys: Collection<PreferenceKeyRow>;
  documents: Collection<PreferenceDocumentRow>;
  /** The quota aggregate's command handler (acknowledged once durable: no read model shows quota streams). */
  claim: CommandHandler<ClaimGrowth, PreferenceQuotaEvent, PreferenceQuotaState, string>;
  quotaAggregate: ReturnType<typeof preferenceQuotaAggregate>;
  now: () => number;
}

/**
 * Run before each append of a key's stream: a write that makes the document larger (or creates it) first claims its
 * growth in the user's quota stream, refused there past a quota (422) or after too many races (429). Writes that do
 * not grow append at once, as before (docs/preference-svc.md, "Quotas").
 */
export function quotaClaims(deps: QuotaClaimsDeps): BeforeAppend<PreferenceId, PreferenceEvent, PreferenceState> {
  return async ({ id: { userId, key }, revision, state, newEvents, newState }) => {
    const before = state.document ? documentBytes(state.document) : 0;
    const bytes = newState.document ? documentBytes(newState.document) : 0;
    if (bytes <= before) return;
    const growth = { key, revision: revision + newEvents.length, bytes, before: { revision, bytes: before } };
    const sizes = await keySizes(deps.keys, deps.documents, userId);
    try {
      await deps.claim(userId, { type: 'ClaimGrowth', data: { ...growth, sizes } });
    } catch (error) {
      if (!(error instanceof DomainError && error.kind === 'QuotaExceeded')) throw error;
      const fenced = await fenceOpenClaims(deps, userId, sizes);
      if (fenced.length === 0) throw error;
      await deps.claim(userId, { type: 'ClaimGrowth', data: { ...growth, sizes: [...sizes, ...fenced] } });
    }
  };
}

/** Settles the user's claims open for longer than OPEN_CLAIM_TTL_MS: each key's size at its claim's revision, or after. */
async function fenceOpenClaims(deps: QuotaClaimsDeps, userId: string, sizes: KeySize[]): Promise<KeySize[]> {
  const quota: PreferenceQuotaState = await currentState(deps.quotaAggregate, deps.store, userId);
  const settled: KeySize[] = [];
  for (const claim of openClaims(quota, sizes, deps.now() - OPEN_CLAIM_TTL_MS)) {
    settled.push(await fence(deps.store, userId, claim.key, claim.revision));
  }
  return settled;
}

/**
 * Makes sure the write claimed at `revision` of the key's stream can never land, and answers the key's size from
 * there on: when the stream is still just below it, the document is restated there (operation `fence`; a deletion
 * when there is none), so the claimed write's append, which expects the revision below, fails and is decided again.
 */
async function fence(store: EventStore, userId: string, key: string, revision: number): Promise<KeySize> {
  const stream = preferenceStream(userId, key);
  // A conflict means the stream moved past the claim's revision: the next read settles it.
  for (let attempt = 1; ; attempt++) {
    const read = await store.readStream(stream.id, { fromRevision: Math.max(revision - 1, 0) });
    const last = read.events.at(-1);
    const event = last && domainEventOf(preferenceStreams, last, stream.owner);
    const document = event?.type === 'PreferenceWritten' ? event.data.document : null;
    const size = { key, revision: read.revision, bytes: document ? documentBytes(document) : 0 };
    // Landed, or passed by another write: what the stream holds now settles the claim.
    if (read.revision !== revision - 1) return size;
    const restated: PreferenceEvent = document
      ? { type: 'PreferenceWritten', data: { key, document, operation: { kind: 'fence' } } }
      : { type: 'PreferenceDeleted', data: { key } };
    try {
      await store.appendToStream(stream.id, [{ id: randomUUID(), ...restated, metadata: { owner: stream.owner } }], {
        expectedRevision: read.revision === -1 ? 'no_stream' : read.revision,
      });
      return { ...size, revision };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || attempt >= 5) throw error;
    }
  }
}
