/**
 * Given / when / then for a test that is not a decider's (an API test on a running system, a process): the state
 * set up first (earlier requests or events), the one action under test, then the checks on its answer and effect.
 *
 *   await given(() => post(alice, 'urn:a'))
 *     .when(() => get(alice))
 *     .then((answer) => expect(answer.status).toBe(200));
 *
 * Each step may be async; `when` gets what `given` returned, `then` gets the answer of `when` and it too.
 */
export function given<G>(state: () => G | Promise<G>) {
  return {
    when<W>(action: (given: G) => W | Promise<W>) {
      return {
        async then(check: (answer: W, given: G) => void | Promise<void>): Promise<void> {
          const before = await state();
          await check(await action(before), before);
        },
      };
    },
  };
}
