import { given } from './scenario';

describe('given / when / then', () => {
  it('runs the state, then the action on it, then the check on the answer and the state', async () => {
    const steps: string[] = [];
    await given(async () => {
      steps.push('given');
      return 2;
    })
      .when(async (n) => {
        steps.push('when');
        return n * 21;
      })
      .then((answer, n) => {
        steps.push('then');
        expect([answer, n]).toEqual([42, 2]);
      });
    expect(steps).toEqual(['given', 'when', 'then']);
  });

  it('fails when a step fails, and never acts on a state that could not be set up', async () => {
    const acted = jest.fn();
    await expect(
      given(() => 1)
        .when(() => 1)
        .then((answer) => expect(answer).toBe(2)),
    ).rejects.toThrow();
    await expect(
      given(() => Promise.reject(new Error('no state')))
        .when(acted)
        .then(() => undefined),
    ).rejects.toThrow('no state');
    expect(acted).not.toHaveBeenCalled();
  });
});
