import { ForeignEventError } from '@udp/eventsourcing';
import type { RecordedEvent } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { recordedEvents } from '@udp/test-system';
import { type ProfileEvent, profileStream } from '../domain/aggregate';
import { PUBLIC_ID, T0, created, profile, updated } from '../testing/profiles';
import { profileProjection, profileRows, publicProfileRows } from './profiles';

/** profiles and public_profiles: given events, the rows; a replayed event changes nothing; nothing private is public. */
async function project(events: RecordedEvent[]) {
  const readModels = new MemoryReadModelStore();
  const projection = profileProjection(readModels);
  for (const event of events) await projection.apply(event);
  const profiles = profileRows(readModels);
  const publicProfiles = publicProfileRows(readModels);
  return { projection, rows: async () => ({ owner: await profiles.get('alice'), public: await publicProfiles.get(PUBLIC_ID) }) };
}

const events: ProfileEvent[] = [
  created(profile()),
  updated(profile({ displayName: 'Alice', lastName: 'Liddell', updatedAt: T0 + 2 }), ['displayName', 'lastName']),
  updated(profile({ displayName: 'Alice', lastName: 'Liddell', public: true, publicFields: ['displayName'], updatedAt: T0 + 3 }), [
    'public',
    'publicFields',
  ]),
];

describe('profiles projection', () => {
  it('keeps the whole profile for its owner, and for others only the public fields once it is public', async () => {
    const { rows } = await project(recordedEvents(profileStream('alice'), events.slice(0, 2)));
    expect(await rows()).toEqual({
      owner: { ...profile({ displayName: 'Alice', lastName: 'Liddell', updatedAt: T0 + 2 }), _id: 'alice', revision: 1 },
      public: { _id: PUBLIC_ID, view: null, revision: 1 },
    });
    const { rows: afterPublic } = await project(recordedEvents(profileStream('alice'), events));
    expect((await afterPublic()).public).toEqual({ _id: PUBLIC_ID, view: { publicUserId: PUBLIC_ID, displayName: 'Alice' }, revision: 2 });
  });

  it('is idempotent: replaying every event, or older ones after newer ones, changes nothing', async () => {
    const recorded = recordedEvents(profileStream('alice'), events);
    const { projection, rows } = await project(recorded);
    const before = await rows();
    for (const event of [...recorded, ...[...recorded].reverse()]) await projection.apply(event);
    expect(await rows()).toEqual(before);
  });

  it("refuses an event of another owner in a user's stream and writes nothing of it", async () => {
    const { projection, rows } = await project([]);
    const [foreign] = recordedEvents({ id: profileStream('alice').id, owner: { userId: 'mallory' } }, [created(profile())]);
    await expect(projection.apply(foreign)).rejects.toBeInstanceOf(ForeignEventError);
    expect(await rows()).toEqual({ owner: null, public: null });
  });
});
