import { given } from '@udp/test-kit';
import type { TestSystem } from '@udp/test-system';
import { P, jsonRequest, startPreferenceSystem } from '../testing/preference-system';

/**
 * Issue 18: 400 preference keys of 250 KiB (100 MB) were accepted for one user. Per-user quotas now bound the
 * keys and the bytes of all of a user's documents (PREFERENCE_MAX_KEYS, PREFERENCE_MAX_USER_BYTES); past one,
 * a write is a 422 naming the setting, and nothing is stored. Small quotas here; the defaults are in the docs.
 */
let system: TestSystem;
let alice: string;
let bob: string;

beforeEach(async () => {
  ({ system, alice, bob } = await startPreferenceSystem({ limits: { maxKeys: 3, maxUserBytes: 10_000 } }));
});
afterEach(() => system.stop());

const put = jsonRequest(() => system, 'put');
const keysOf = async (auth: string) => (await system.http.get(P).set('authorization', auth)).body;
const nothing = () => undefined;

describe('given a user with three keys, the quota', () => {
  beforeEach(async () => {
    for (const key of ['a', 'b', 'c']) expect((await put(alice, `${P}/${key}`, { v: key })).status).toBe(201);
  });

  it('when a fourth key is written (whole or at a path), then 422 names PREFERENCE_MAX_KEYS and nothing is stored', async () => {
    for (const [path, value] of [
      [`${P}/d`, { v: 'd' }],
      [`${P}/d/x`, 1],
    ] as const) {
      await given(nothing)
        .when(() => put(alice, path, value))
        .then(async (res) => {
          expect(res.status).toBe(422);
          expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
          expect(res.body).toMatchObject({ title: 'Quota Exceeded', limit: 'PREFERENCE_MAX_KEYS', max: 3 });
          expect(res.body.detail).toMatch(/at most 3 preference keys \(PREFERENCE_MAX_KEYS\)/);
          expect(await keysOf(alice)).toEqual(['a', 'b', 'c']);
        });
    }
  });

  it('when a key is rewritten, or one is deleted and a new one written, then it is accepted; another user has his own', async () => {
    await given(nothing)
      .when(() => put(alice, `${P}/a`, { v: 'A' }))
      .then((res) => expect(res.status).toBe(200));
    await given(async () => expect((await system.http.delete(`${P}/c`).set('authorization', alice)).status).toBe(204))
      .when(() => put(alice, `${P}/d`, { v: 'd' }))
      .then((res) => expect(res.status).toBe(201));
    await given(nothing)
      .when(() => put(bob, `${P}/a`, { v: 'a' }))
      .then((res) => expect(res.status).toBe(201));
  });
});

describe('given a user whose documents hold 9,000 bytes, the quota', () => {
  const text = (bytes: number) => ({ t: 'x'.repeat(bytes - 8) }); // {"t":"..."} is 8 bytes around the text

  beforeEach(async () => {
    expect((await put(alice, `${P}/a`, text(4500))).status).toBe(201);
    expect((await put(alice, `${P}/b`, text(4500))).status).toBe(201);
  });

  it('when a write would take them past 10,000 bytes, then 422 names PREFERENCE_MAX_USER_BYTES and nothing is stored', async () => {
    await given(nothing)
      .when(() => put(alice, `${P}/c`, text(1001)))
      .then((res) => {
        expect(res.status).toBe(422);
        expect(res.body).toMatchObject({ limit: 'PREFERENCE_MAX_USER_BYTES', max: 10_000 });
        expect(res.body.detail).toMatch(/the other keys hold 9000 and this document would be 1001/);
      });
    await given(nothing)
      .when(() => put(alice, `${P}/b/t`, 'x'.repeat(5600)))
      .then(async (res) => {
        expect(res.status).toBe(422);
        expect(await keysOf(alice)).toEqual(['a', 'b']);
      });
  });

  it('when a write stays within it, or makes a document smaller, then it is accepted', async () => {
    await given(nothing)
      .when(() => put(alice, `${P}/c`, text(1000)))
      .then((res) => expect(res.status).toBe(201));
    await given(nothing)
      .when(() => put(alice, `${P}/b`, text(10)))
      .then((res) => expect(res.status).toBe(200));
  });
});
