import { PROFILE_EDITABLE_FIELDS, type UpdateProfileData, byProfileField } from '@udp/contracts';
import { type Command, type Decider, foldByEvolve } from '@udp/eventsourcing';
import type { ProfileEvent, ProfileState } from './aggregate';

/**
 * The profile exists from the user's first authenticated call: that call ensures it, with a public user
 * id (UUID v4) generated outside the domain and passed in, so the decider stays pure.
 */
export type EnsureProfile = Command<'EnsureProfile', { publicUserId: string }>;
/** Fields left out are kept; null clears one. Creates the profile first when there is none. */
export type UpdateProfile = Command<'UpdateProfile', { publicUserId: string; changes: UpdateProfileData }>;
export type ProfileCommand = EnsureProfile | UpdateProfile;

/** null until the profile is created. */
export type State = { profile: ProfileState | null };

/** A new profile: every field the user fills in null, and private: nothing is shown to others until the user chooses. */
export function newProfile(publicUserId: string, now: number): ProfileState {
  return { publicUserId, ...byProfileField(() => null), public: false, publicFields: [], createdAt: now, updatedAt: now };
}

function ensure({ data, metadata }: EnsureProfile, state: State): ProfileEvent[] {
  return state.profile ? [] : [{ type: 'ProfileCreated', data: { profile: newProfile(data.publicUserId, metadata.now) } }];
}

function update({ data, metadata }: UpdateProfile, state: State): ProfileEvent[] {
  const created = ensure({ type: 'EnsureProfile', data: { publicUserId: data.publicUserId }, metadata }, state);
  const before = state.profile ?? newProfile(data.publicUserId, metadata.now);
  const after: ProfileState = { ...before };
  const changedFields: string[] = [];
  for (const field of PROFILE_EDITABLE_FIELDS) {
    const value = data.changes[field];
    if (value === undefined || JSON.stringify(value) === JSON.stringify(before[field])) continue;
    (after as Record<string, unknown>)[field] = value;
    changedFields.push(field);
  }
  if (changedFields.length === 0) return created;
  return [...created, { type: 'ProfileUpdated', data: { profile: { ...after, updatedAt: metadata.now }, changedFields } }];
}

export function decide(command: ProfileCommand, state: State): ProfileEvent[] {
  switch (command.type) {
    case 'EnsureProfile':
      return ensure(command, state);
    case 'UpdateProfile':
      return update(command, state);
  }
}

export function initialState(): State {
  return { profile: null };
}

/** Both events carry the whole profile. */
export function evolve(_state: State, event: ProfileEvent): State {
  return { profile: event.data.profile };
}

export const profileDecider: Decider<ProfileCommand, ProfileEvent, State> = {
  decide,
  evolve,
  initialState,
  fold: foldByEvolve(evolve),
};
