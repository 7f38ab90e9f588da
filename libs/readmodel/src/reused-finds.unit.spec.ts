import type { PreparedFind } from './port';
import { reusedFind } from './reused-finds';

describe('reusedFind', () => {
  it('prepares a shape once per owner, and again for another shape or another owner', () => {
    let prepared = 0;
    const prepare = (): PreparedFind<{ n: number }> => {
      prepared++;
      return async () => [{ n: prepared }];
    };
    const owner = {};
    const first = reusedFind(owner, 'live', prepare);
    expect(reusedFind(owner, 'live', prepare)).toBe(first);
    expect(prepared).toBe(1);
    expect(reusedFind(owner, 'all', prepare)).not.toBe(first);
    expect(reusedFind({}, 'live', prepare)).not.toBe(first);
    expect(prepared).toBe(3);
  });
});
