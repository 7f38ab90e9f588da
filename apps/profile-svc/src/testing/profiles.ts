import { newProfile } from '../domain/decider';
import type { ProfileEvent, ProfileState } from '../domain/aggregate';

/** Profile fixtures for the specs: states and events of one user's profile. What a new profile holds is the decider's spec. */
export const T0 = 1_700_000_000_000;
export const PUBLIC_ID = '0b6f3a52-2a4e-4c1f-9a53-1d6f0f0c1a11';
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A profile created before T0, with `fields` changed. */
export const profile = (fields: Partial<ProfileState> = {}): ProfileState => ({ ...newProfile(PUBLIC_ID, T0 - 100), ...fields });
export const created = (state: ProfileState): ProfileEvent => ({ type: 'ProfileCreated', data: { profile: state } });
export const updated = (state: ProfileState, changedFields: string[]): ProfileEvent => ({
  type: 'ProfileUpdated',
  data: { profile: state, changedFields },
});
