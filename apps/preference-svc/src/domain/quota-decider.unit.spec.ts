import { DomainError } from '@udp/eventsourcing';
import { DeciderSpecification } from '@udp/test-kit';
import type { PreferenceQuotaEvent } from './aggregate';
import { type ClaimGrowth, type KeySize, openClaims, preferenceQuotaDecider } from './quota-decider';

const decider = preferenceQuotaDecider({ maxKeys: 3, maxUserBytes: 400 });
const spec = DeciderSpecification(decider);
const NOW = 1_700_000_000_000;

/** A write of `key` growing it from `before` bytes (at `revision - 1`) to `bytes`, knowing `sizes` from the read model. */
const claim = (key: string, revision: number, bytes: number, before = 0, sizes: KeySize[] = []): ClaimGrowth => ({
  type: 'ClaimGrowth',
  data: { key, revision, bytes, before: { revision: revision - 1, bytes: before }, sizes },
  metadata: { now: NOW },
});
const claimed = (key: string, revision: number, bytes: number, before = 0, claimedAt = NOW): PreferenceQuotaEvent => ({
  type: 'PreferenceQuotaClaimed',
  data: { key, revision, bytes, before: { revision: revision - 1, bytes: before }, claimedAt },
});
const quota = (limit: string) => (error: unknown) =>
  error instanceof DomainError && error.kind === 'QuotaExceeded' && error.quota?.limit === limit;

describe('preference quota decider (3 keys, 400 bytes)', () => {
  describe('when the read model knows every key and no write is in flight', () => {
    const sizes = [
      { key: 'a', revision: 0, bytes: 100 },
      { key: 'b', revision: 4, bytes: 100 },
      { key: 'c', revision: 1, bytes: 100 },
      { key: 'gone', revision: 7, bytes: 0 },
    ];

    it('refuses a fourth key, and claims the growth of one of the three', () => {
      spec
        .given([])
        .when(claim('d', 0, 10, 0, sizes))
        .thenThrows(quota('PREFERENCE_MAX_KEYS'));
      spec
        .given([])
        .when(claim('a', 1, 190, 100, sizes))
        .then([claimed('a', 1, 190, 100)]);
    });

    it('refuses growth past the bytes, and claims nothing for a write that does not grow', () => {
      spec
        .given([])
        .when(claim('a', 1, 201, 100, sizes))
        .thenThrows(quota('PREFERENCE_MAX_USER_BYTES'));
      spec
        .given([])
        .when(claim('a', 1, 50, 100, sizes))
        .then([]);
    });
  });

  describe('when a write of another key is in flight (claimed, not in the read model)', () => {
    it('counts it, so two writes cannot pass the quota together', () => {
      spec
        .given([claimed('b', 0, 300)])
        .when(claim('a', 0, 150))
        .thenThrows(quota('PREFERENCE_MAX_USER_BYTES'));
      spec
        .given([claimed('b', 0, 10), claimed('c', 0, 10), claimed('d', 0, 10)])
        .when(claim('a', 0, 10))
        .thenThrows(quota('PREFERENCE_MAX_KEYS'));
    });

    it('counts the larger of what its writer read and what it claims, until the read model shows a newer revision', () => {
      // b held 300 at revision 4; a write that would make it 20 may not land: 300 still counts.
      spec
        .given([claimed('b', 5, 20, 300)])
        .when(claim('a', 0, 150))
        .thenThrows(quota('PREFERENCE_MAX_USER_BYTES'));
      spec
        .given([claimed('b', 5, 20, 300)])
        .when(claim('a', 0, 150, 0, [{ key: 'b', revision: 5, bytes: 20 }]))
        .then([claimed('a', 0, 150)]);
    });

    it('counts the larger of two claims of one revision, whichever lands', () => {
      spec
        .given([claimed('b', 2, 300, 10), claimed('b', 2, 20, 10)])
        .when(claim('a', 0, 150))
        .thenThrows(quota('PREFERENCE_MAX_USER_BYTES'));
    });

    it('forgets a claim that a later claim of the same key shows can no longer land', () => {
      spec
        .given([claimed('b', 2, 300, 10), claimed('b', 4, 20, 15)])
        .when(claim('a', 0, 150))
        .then([claimed('a', 0, 150)]);
    });
  });

  it('lists the claims open since before a time and not settled by a known size', () => {
    const state = decider.fold(
      [claimed('a', 0, 100, 0, NOW - 20_000), claimed('b', 3, 100, 0, NOW - 20_000), claimed('c', 0, 100)],
      decider.initialState(),
    );
    expect(openClaims(state, [{ key: 'b', revision: 3, bytes: 100 }], NOW - 10_000)).toEqual([
      { key: 'a', revision: 0, bytes: 100, claimedAt: NOW - 20_000 },
    ]);
  });
});
