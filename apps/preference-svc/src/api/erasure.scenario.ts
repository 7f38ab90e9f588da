import { randomUUID } from 'node:crypto';
import { type ErasureBackends, bytesFoundUnder, distinctiveUserId, eraseUserOnBus, erasureFixture } from '@udp/test-system';
import { createPreferenceService } from '../app';

/** User-data erasure (issue 10): a request on the bus, then preference-svc knows nothing of the user. */
export function preferenceErasureSuite(kind: string, openBackends: () => Promise<ErasureBackends>) {
  const P = '/api/preference';
  // Distinctive ids, so that a scan of the raw SQLite bytes finds them if anything is left.
  const erasee = distinctiveUserId('erasee');
  const keeper = distinctiveUserId('keeper');
  const keysOf = (user: string) => ['player', 'app/settings', `favourites-${user}`];
  const goneKeyOf = (user: string) => `gone-${user}`;
  const documentOf = (user: string, key: string) => ({
    owner: user,
    key,
    items: [`urn:${user}:fav1`, `urn:${user}:fav2`],
    nested: { deep: { value: 7 } },
  });

  const f = erasureFixture(
    'preference-svc',
    { prefixes: ['/api/preference'], create: (deps) => createPreferenceService(deps) },
    openBackends,
  );

  async function fillPreferences(user: string) {
    const client = await f.as(user);
    for (const key of keysOf(user)) {
      expect((await client.put(`${P}/${encodeURIComponent(key)}`, documentOf(user, key))).status).toBeLessThan(300);
      expect((await client.put(`${P}/${encodeURIComponent(key)}/nested/deep/value`, 8)).status).toBeLessThan(300);
    }
    // A deleted key: its tombstone (kept for live sync, with the store position of its deletion) names it.
    expect((await client.put(`${P}/${goneKeyOf(user)}`, { gone: true })).status).toBeLessThan(300);
    expect((await client.delete(`${P}/${goneKeyOf(user)}`)).status).toBe(204);
  }

  /** Every read endpoint: the keys, each document (whole, by JSONPath, by path). */
  async function answers(user: string, keys: string[]) {
    const client = await f.as(user);
    const paths = [
      P,
      ...keys.flatMap((key) => {
        const k = encodeURIComponent(key);
        return [`${P}/${k}`, `${P}/${k}?jsonpath=${encodeURIComponent('$.items[0]')}`, `${P}/${k}/nested/deep`];
      }),
    ];
    return Promise.all(
      paths.map(async (path) => {
        const res = await client.get(path);
        return { path, status: res.status, body: res.body as unknown };
      }),
    );
  }

  describe(`erasure of a user in preference-svc (${kind})`, () => {
    it('answers every endpoint for the erased user as for a new one, keeps the others, and leaves no byte of the user on disk', async () => {
      await fillPreferences(erasee);
      await fillPreferences(keeper);
      const keeperBefore = await answers(keeper, keysOf(keeper));
      const newUser = await answers(`newcomer${randomUUID()}`, keysOf(erasee));
      expect(await answers(erasee, keysOf(erasee))).not.toEqual(newUser);

      const confirmations = await eraseUserOnBus(f.system, erasee);
      // Four keys (one deleted: its tombstones) and the user's quota stream (its claims name the keys).
      expect(confirmations).toEqual([
        expect.objectContaining({ userId: erasee, service: 'preference-svc', streamsDeleted: 5, documentsDeleted: 8 }),
      ]);

      expect(await answers(erasee, keysOf(erasee))).toEqual(newUser);
      expect(await answers(keeper, keysOf(keeper))).toEqual(keeperBefore);
      const encodedKey = Buffer.from(`favourites-${erasee}`).toString('base64url');
      expect(bytesFoundUnder(f.dataDir, [erasee, `urn:${erasee}:fav1`, encodedKey, goneKeyOf(erasee)])).toEqual([]);
      expect(bytesFoundUnder(f.dataDir, [keeper]).length).toBeGreaterThan(0);
      expect((await f.backends.leftovers?.([erasee, `urn:${erasee}:fav1`])) ?? []).toEqual([]);
      expect((await f.backends.leftovers?.([keeper]))?.length ?? 1).toBeGreaterThan(0);
    });

    it('erases only the user, not another whose id starts with the same characters and a dash', async () => {
      // Stream names are `preference-<user>-<base64url key>`: user `x` and user `x-a` share a prefix.
      const kin = `${erasee}-QQ`;
      await fillPreferences(erasee);
      await fillPreferences(kin);
      const kinBefore = await answers(kin, keysOf(kin));
      expect(await eraseUserOnBus(f.system, erasee)).toEqual([expect.objectContaining({ streamsDeleted: 5 })]);
      expect(await answers(kin, keysOf(kin))).toEqual(kinBefore);
    });

    it('erases keys at the edges of the code space, and a later write does not bring their content back', async () => {
      // Issue 27 #2: a key starting with U+10FFFF lay above the range erasure listed the user's streams by.
      const edgeKeys = [
        '\u{10FFFF}tail',
        '\u{10FFFF}',
        '\u{10FFFF}\u{10FFFF}',
        '\uFFFF',
        '\uFFFFz',
        '\u{1F3A7}',
        '\u{10000}',
        '\uE000',
        '\u0080',
      ];
      const secretOf = (i: number) => `edgesecret${i}x${erasee}`;
      const client = await f.as(erasee);
      for (const [i, key] of edgeKeys.entries()) {
        expect((await client.put(`${P}/${encodeURIComponent(key)}`, { secret: secretOf(i) })).status).toBeLessThan(300);
      }
      expect(((await client.get(P)).body as string[]).sort()).toEqual([...edgeKeys].sort());

      // Each key's stream and the user's quota stream.
      expect(await eraseUserOnBus(f.system, erasee)).toEqual([expect.objectContaining({ streamsDeleted: edgeKeys.length + 1 })]);

      expect((await client.get(P)).body).toEqual([]);
      const secrets = edgeKeys.map((_, i) => secretOf(i));
      expect(bytesFoundUnder(f.dataDir, [erasee, ...secrets, ...edgeKeys.filter((k) => k.length > 1)])).toEqual([]);
      for (const [i, key] of edgeKeys.entries()) {
        const k = encodeURIComponent(key);
        expect([key, (await client.put(`${P}/${k}/newfield`, i)).status]).toEqual([key, 201]);
        expect([key, (await client.get(`${P}/${k}`)).body]).toEqual([key, { newfield: i }]);
      }
    });

    it('starts a new write of the erased user from empty', async () => {
      await fillPreferences(erasee);
      await eraseUserOnBus(f.system, erasee);
      const client = await f.as(erasee);
      expect((await client.put(`${P}/player/volume`, 3)).status).toBeLessThan(300);
      expect((await client.get(`${P}/player`)).body).toEqual({ volume: 3 });
      expect((await client.get(P)).body).toEqual(['player']);
    });
  });
}
