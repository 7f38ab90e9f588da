import { type ProfileChangesPage, ProfileChangesQuery } from '@udp/contracts';
import { type InternalReads, parseInput } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import { ownerView } from '../domain/public-view';
import { type ProfileRow, profileOfRow } from '../projections/profiles';

/**
 * What the gateway's live sync pulls (docs/live-sync.md): the caller's profile if it changed at or after `since` (a
 * revision of the user's profile stream). The row keeps the revision of its last change, so the position after it is
 * that revision + 1: a resume from it is exactly once. Internal: the gateway answers 404 for /internal. An internal
 * read: its route over HTTP, a call in process for the embedded gateway.
 */
export function profileChanges(profiles: Collection<ProfileRow>): InternalReads {
  return {
    '/internal/profile/changes': async (userId, query) => {
      const { since } = parseInput(ProfileChangesQuery, query, 'query');
      const row = await profiles.get(userId);
      const applied = row ? row.revision + 1 : 0;
      // A position past what is applied is not of this profile (erased and begun again): from the beginning.
      const from = since === undefined ? applied : since > applied ? 0 : since;
      const changes = [];
      if (row && row.revision >= from) {
        changes.push({ profile: ownerView(profileOfRow(row)), position: row.revision + 1 });
      }
      return { changes, applied } satisfies ProfileChangesPage;
    },
  };
}
