import { type Command, type Decider, copyOnWrite, quotaExceeded } from '@udp/eventsourcing';
import type { PreferenceQuotaEvent } from './aggregate';
import type { PreferenceQuotas } from './decider';

/**
 * A user's preference quotas, decided on one stream per user (issue 27). The documents are one stream per key, so
 * no key's stream sees the others; every write that grows the user's data first claims its growth here, at this
 * stream's expected revision, so two growing writes always meet (docs/preference-svc.md, "Quotas").
 *
 * What holds: for every key, the size counted here is never below the size its stream has. A key's size is known
 * from the read model (its row: the size at a revision of its stream) or from a claim's `before` (what its writer
 * read); a claim newer than what is known counts as the larger of the two, since its write may land or not. Writes
 * that do not grow a document claim nothing: they can only make it smaller than what is counted.
 */

/** A key's stream held a document of `bytes` (0: none) at `revision` (-1: no stream). */
export interface KeySize {
  key: string;
  revision: number;
  bytes: number;
}

interface Claim {
  revision: number;
  bytes: number;
  claimedAt: number;
}

interface KeyUsage {
  known: { revision: number; bytes: number };
  /** The newest claim newer than `known`: its write may still land. */
  claim?: Claim;
}

/** Every key a write ever claimed growth for, what its writer read, and the claim. */
export interface PreferenceQuotaState {
  keys: ReadonlyMap<string, KeyUsage>;
}

/**
 * Claim the growth of `key` by a write that will land at `revision` of its stream, with a document of `bytes`;
 * `before` is what the writer read. `sizes`: the sizes the read model knows of the user's keys (and of keys fenced).
 */
export type ClaimGrowth = Command<
  'ClaimGrowth',
  { key: string; revision: number; bytes: number; before: { revision: number; bytes: number }; sizes: KeySize[] }
>;
export type PreferenceQuotaCommand = ClaimGrowth;

/** Each key's size as it may be at most now, from the claims and `sizes`: a key of size 0 holds no document. */
export function usageOf(state: PreferenceQuotaState, sizes: readonly KeySize[]): Map<string, number> {
  const known = new Map<string, { revision: number; bytes: number }>();
  for (const [key, usage] of state.keys) known.set(key, usage.known);
  for (const size of sizes) if (size.revision > (known.get(size.key)?.revision ?? -2)) known.set(size.key, size);
  const usage = new Map<string, number>();
  for (const [key, size] of known) {
    const claim = state.keys.get(key)?.claim;
    usage.set(key, claim && claim.revision > size.revision ? Math.max(size.bytes, claim.bytes) : size.bytes);
  }
  return usage;
}

/**
 * Claims made before `claimedBefore` that nothing known has settled: their writes have not landed, perhaps never
 * will (the writer was killed between its claim and its write). Fencing them settles them (quota-claims.ts).
 */
export function openClaims(state: PreferenceQuotaState, sizes: readonly KeySize[], claimedBefore: number): KeySize[] {
  const known = new Map<string, number>();
  for (const size of sizes) known.set(size.key, Math.max(size.revision, known.get(size.key) ?? -1));
  const open: KeySize[] = [];
  for (const [key, { claim }] of state.keys) {
    if (claim && claim.claimedAt < claimedBefore && claim.revision > (known.get(key) ?? -1)) open.push({ key, ...claim });
  }
  return open;
}

export function preferenceQuotaDecider(
  quotas: PreferenceQuotas,
): Decider<PreferenceQuotaCommand, PreferenceQuotaEvent, PreferenceQuotaState> {
  function decide(command: PreferenceQuotaCommand, state: PreferenceQuotaState): PreferenceQuotaEvent[] {
    const { key, revision, bytes, before, sizes } = command.data;
    // Only growth is claimed (and refused): a user over a lowered quota can still shrink or delete.
    if (bytes <= before.bytes) return [];
    // Nothing to claim when another writer of the key already claimed as much at this revision, or the key's stream is
    // known to be past the revision read (this write's append will fail and be decided again): parallel writers of one
    // document then race on its stream, not here too.
    const own = state.keys.get(key);
    if (
      own &&
      (own.known.revision >= revision ||
        (own.claim && (own.claim.revision > revision || (own.claim.revision === revision && own.claim.bytes >= bytes))))
    ) {
      return [];
    }
    let keys = 0;
    let total = 0;
    for (const [other, size] of usageOf(state, [...sizes, { key, ...before }])) {
      if (other === key || size === 0) continue;
      keys++;
      total += size;
    }
    if (before.bytes === 0 && keys + 1 > quotas.maxKeys) {
      throw quotaExceeded(
        `a user has at most ${quotas.maxKeys} preference keys (PREFERENCE_MAX_KEYS); this user has ${keys}`,
        'PREFERENCE_MAX_KEYS',
        quotas.maxKeys,
      );
    }
    if (total + bytes > quotas.maxUserBytes) {
      throw quotaExceeded(
        `a user's preferences hold at most ${quotas.maxUserBytes} bytes in all (PREFERENCE_MAX_USER_BYTES); ` +
          `the other keys hold ${total} and this document would be ${bytes}`,
        'PREFERENCE_MAX_USER_BYTES',
        quotas.maxUserBytes,
      );
    }
    return [{ type: 'PreferenceQuotaClaimed', data: { key, revision, bytes, before, claimedAt: command.metadata.now } }];
  }

  return { decide, initialState, ...copyOnWrite(copy, apply) };
}

function initialState(): PreferenceQuotaState {
  return { keys: new Map() };
}

const copy = (state: PreferenceQuotaState) => ({ keys: new Map(state.keys) });

function apply(state: { keys: Map<string, KeyUsage> }, { data }: PreferenceQuotaEvent): void {
  const { key, revision, bytes, before, claimedAt } = data;
  const usage = state.keys.get(key) ?? { known: { revision: -1, bytes: 0 } };
  const known = before.revision > usage.known.revision ? before : usage.known;
  let claim = usage.claim && usage.claim.revision > known.revision ? usage.claim : undefined;
  // A claim at or below what is known is of a write that can no longer land.
  if (revision > known.revision) {
    if (!claim || claim.revision < revision) claim = { revision, bytes, claimedAt };
    // Two writers that read the same revision: whichever lands, the larger is counted.
    else if (claim.revision === revision)
      claim = { revision, bytes: Math.max(claim.bytes, bytes), claimedAt: Math.max(claim.claimedAt, claimedAt) };
  }
  state.keys.set(key, claim ? { known, claim } : { known });
}
