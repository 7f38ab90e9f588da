import { randomUUID } from 'node:crypto';
import { type ErasureBackends, bytesFoundUnder, distinctiveUserId, eraseUserOnBus, erasureFixture } from '@udp/test-system';
import { createProfileService } from '../app';

/** User-data erasure (issue 10): a request on the bus, then profile-svc knows nothing of the user. */
export function profileErasureSuite(kind: string, openBackends: () => Promise<ErasureBackends>) {
  const T0 = 1_700_000_000_000;
  const P = '/api/profile/v3';
  let clock = T0;
  // Distinctive ids and values, so that a scan of the raw SQLite bytes finds them if anything is left.
  const erasee = distinctiveUserId('erasee');
  const keeper = distinctiveUserId('keeper');
  const profileOf = (user: string) => ({
    displayName: `name of ${user}`,
    firstName: `first ${user}`,
    lastName: 'Lovelace',
    language: 'en',
    public: true,
    publicFields: ['displayName'],
  });

  beforeEach(() => {
    clock = T0;
  });
  const f = erasureFixture(
    'profile-svc',
    { prefixes: ['/api/profile'], create: (deps) => createProfileService({ ...deps, now: () => clock }) },
    openBackends,
  );

  /** The profile's public id, after two updates (each may not change it, but the erasure must find every one). */
  async function fillProfile(user: string): Promise<string> {
    const client = await f.as(user);
    expect((await client.put(P, { displayName: 'first draft' })).status).toBe(200);
    const res = await client.put(P, profileOf(user));
    expect(res.status).toBe(200);
    return res.body.publicUserId as string;
  }

  describe(`erasure of a user in profile-svc (${kind})`, () => {
    it('answers for the erased user as for a new one (a fresh private profile), keeps the others, and leaves no byte of the user on disk', async () => {
      const publicId = await fillProfile(erasee);
      const keeperPublicId = await fillProfile(keeper);
      const observer = await f.as(`observer${randomUUID()}`);
      expect((await observer.get(`${P}/public/${publicId}`)).status).toBe(200);
      const keeperBefore = [(await (await f.as(keeper)).get(P)).body, (await observer.get(`${P}/public/${keeperPublicId}`)).body];

      const confirmations = await eraseUserOnBus(f.system, erasee);
      expect(confirmations).toEqual([
        expect.objectContaining({ userId: erasee, service: 'profile-svc', streamsDeleted: 1, documentsDeleted: 2 }),
      ]);
      // Before the erased user calls again (the first call creates a profile).
      expect(bytesFoundUnder(f.dataDir, [erasee, `name of ${erasee}`, `first ${erasee}`, publicId])).toEqual([]);
      expect(bytesFoundUnder(f.dataDir, [keeper]).length).toBeGreaterThan(0);
      expect((await f.backends.leftovers?.([erasee, `name of ${erasee}`, publicId])) ?? []).toEqual([]);
      expect((await f.backends.leftovers?.([keeper]))?.length ?? 1).toBeGreaterThan(0);

      expect((await observer.get(`${P}/public/${publicId}`)).status).toBe(404);
      clock = T0 + 100;
      const fresh = (await (await f.as(erasee)).get(P)).body;
      const newcomer = (await (await f.as(`newcomer${randomUUID()}`)).get(P)).body;
      expect(fresh).toEqual({ ...newcomer, publicUserId: expect.any(String) });
      expect(fresh).toMatchObject({ displayName: null, public: false, createdAt: T0 + 100 });
      expect(fresh.publicUserId).not.toBe(publicId);
      expect([(await (await f.as(keeper)).get(P)).body, (await observer.get(`${P}/public/${keeperPublicId}`)).body]).toEqual(keeperBefore);
    });
  });
}
