import { DeciderSpecification } from './specification';
import { waitUntil } from './environment';

const decider = {
  initialState: () => 0,
  evolve: (s: number, e: { type: 'Inc' }) => (e.type === 'Inc' ? s + 1 : s),
  decide: (c: { type: 'Inc' | 'Fail' }, s: number) => {
    if (c.type === 'Fail') throw new Error(`failed at ${s}`);
    return s < 2 ? [{ type: 'Inc' as const }] : [];
  },
};

describe('DeciderSpecification', () => {
  const spec = DeciderSpecification(decider);
  it('checks events, nothing, and errors against the folded past', () => {
    spec
      .given([])
      .when({ type: 'Inc' })
      .then([{ type: 'Inc' }]);
    spec
      .given([{ type: 'Inc' }, { type: 'Inc' }])
      .when({ type: 'Inc' })
      .thenNothingHappens();
    spec
      .given([{ type: 'Inc' }])
      .when({ type: 'Fail' })
      .thenThrows((e) => (e as Error).message === 'failed at 1');
  });
  it('fails when the expectation does not hold', () => {
    expect(() => spec.given([]).when({ type: 'Inc' }).thenNothingHappens()).toThrow();
    expect(() =>
      spec
        .given([])
        .when({ type: 'Inc' })
        .thenThrows(() => true),
    ).toThrow();
  });
});

describe('waitUntil', () => {
  it('resolves once the condition holds and fails after the timeout', async () => {
    let n = 0;
    await waitUntil(() => ++n > 3, 1000);
    await expect(waitUntil(() => false, 20, 'never')).rejects.toThrow('never not met within 20 ms');
  });
});
