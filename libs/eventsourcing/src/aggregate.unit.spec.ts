import { joinIdParts, oneStreamPerUser, splitIdParts, userScopedId } from './aggregate';

const awkward = ['u', 'u-YWI', 'a/b', 'a%2Fb', 'a%', '%', '/', '', 'ab>settings', 'settings', 'YWI-c2V0dGluZ3M', 'x/y/z', 'é/ü'];

describe('stream names', () => {
  it('give a different two-part name to every (user, key) pair, and read back the pair', () => {
    const names = new Map<string, string>();
    for (const userId of awkward) {
      for (const key of awkward) {
        const name = joinIdParts(userId, key);
        expect(names.get(name)).toBeUndefined();
        names.set(name, `${userId}|${key}`);
        expect(splitIdParts(name, 2)).toEqual([userId, key]);
        expect(name.startsWith(`${joinIdParts(userId)}/`)).toBe(true);
        for (const other of awkward) if (other !== userId) expect(name.startsWith(`${joinIdParts(other)}/`)).toBe(false);
      }
    }
  });

  it('give a different one-user stream and document id to every user', () => {
    const history = oneStreamPerUser('history-');
    const streams = new Set(awkward.map((userId) => history.streamOf(userId).id));
    expect(streams.size).toBe(awkward.length);
    for (const userId of awkward) expect(history.idOf(history.streamOf(userId).id)).toBe(userId);
    expect(() => history.idOf('playlists-alice')).toThrow('playlists-alice is not a history- stream');
    const ids = new Set<string>();
    for (const userId of awkward) for (const rest of awkward) ids.add(userScopedId(userId, rest));
    expect(ids.size).toBe(awkward.length ** 2);
  });

  it('leave user ids as the gateway issues them unchanged, so stored names stay valid', () => {
    expect(oneStreamPerUser('history-').streamOf('alice-1@x.y:z|w')).toEqual({
      id: 'history-alice-1@x.y:z|w',
      owner: { userId: 'alice-1@x.y:z|w' },
    });
    expect(userScopedId('alice', 'urn:a/b')).toBe('alice/urn:a/b');
  });
});
