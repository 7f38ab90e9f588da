import type { Profile, PublicProfile } from '@udp/contracts';
import type { ProfileState } from './aggregate';

/** What others may see: nothing unless the profile is public, then only the public fields that are set. */
export function publicView(profile: ProfileState): PublicProfile | null {
  if (!profile.public) return null;
  const view: PublicProfile = { publicUserId: profile.publicUserId };
  for (const field of profile.publicFields) {
    const value = profile[field];
    if (value !== null) view[field] = value;
  }
  return view;
}

/** The owner sees the whole profile. */
export function ownerView(profile: ProfileState): Profile {
  return { ...profile, publicFields: [...profile.publicFields] };
}
