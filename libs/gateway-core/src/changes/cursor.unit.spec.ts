import { createHmac } from 'node:crypto';
import { HttpError } from '@udp/http-kit';
import { CursorCodec } from './cursor';

/** Cursors: sealed for their user; one of before preference and profile events reads those from their beginning. */
const key = Buffer.alloc(32, 7);
const codec = new CursorCodec(key);
/** A cursor sealed over any payload with the codec's key, as cursor.ts seals (a payload of another form of ours). */
const sealed = (userId: string, payload: object) => {
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  const mac = createHmac('sha256', key).update(`${userId.length}:${userId}`).update(bytes).digest().subarray(0, 16);
  return `c1.${Buffer.concat([mac, bytes]).toString('base64url')}`;
};
const refused = (userId: string, cursor: string) => {
  try {
    codec.decode(userId, cursor, 'Last-Event-ID');
  } catch (error) {
    return (error as HttpError).status;
  }
  return 'accepted';
};

describe('CursorCodec', () => {
  const positions = {
    history: '12.abc',
    playlist: 4,
    preference: '340282366920938463463374607431768211455',
    profile: 2,
    epoch: 1_765_000_000_000,
  };

  it('gives back the four positions and the erasure epoch of its own user, a 128-bit store position exactly', () => {
    expect(codec.decode('ann', codec.encode('ann', positions), 'Last-Event-ID')).toEqual(positions);
    expect(refused('bob', codec.encode('ann', positions))).toBe(400);
  });

  it('reads a cursor of before preference and profile events (history and playlists only) from their beginning', () => {
    expect(codec.decode('ann', sealed('ann', { h: '12.abc', p: 4 }), 'Last-Event-ID')).toEqual({
      history: '12.abc',
      playlist: 4,
      preference: '0',
      profile: 0,
      epoch: 0,
    });
    // Still its own user's only.
    expect(refused('bob', sealed('ann', { h: '12.abc', p: 4 }))).toBe(400);
  });

  it('refuses a payload no gateway sealed: one new position without the other, or a malformed one', () => {
    expect(refused('ann', sealed('ann', { h: '1', p: 0, f: '5' }))).toBe(400);
    expect(refused('ann', sealed('ann', { h: '1', p: 0, r: 1 }))).toBe(400);
    expect(refused('ann', sealed('ann', { h: '1', p: 0, f: '-5', r: 1 }))).toBe(400);
    expect(refused('ann', sealed('ann', { h: '1', p: 0, f: 5, r: 1 }))).toBe(400);
    expect(refused('ann', sealed('ann', { h: '1', p: 0, f: '5', r: -1 }))).toBe(400);
    expect(refused('ann', sealed('ann', { h: '1', p: 0, f: '5', r: 1, e: -1 }))).toBe(400);
    expect(refused('ann', sealed('ann', { h: '1', p: 0, f: '5', r: 1, e: '1' }))).toBe(400);
    expect(refused('ann', sealed('ann', { h: '1', p: 0, f: '5', r: 1 }))).toBe('accepted');
    // A cursor of before erasure epochs is of epoch 0: the user had no erasure the gateway knew of.
    expect(codec.decode('ann', sealed('ann', { h: '1', p: 0, f: '5', r: 1 }), 'Last-Event-ID').epoch).toBe(0);
  });
});
