/** The shape of a decider (structural, so this library depends on nothing). */
interface Decider<C, E, S> {
  decide(command: C, state: S): E[];
  evolve(state: S, event: E): S;
  initialState(): S;
}

/**
 * Given / when / then for deciders:
 *   spec.given([pastEvents]).when(command).then([expectedEvents])
 *   spec.given([pastEvents]).when(command).thenThrows(DomainError, /message/)
 */
export function DeciderSpecification<C, E, S>(decider: Decider<C, E, S>) {
  return {
    given(events: E[]) {
      return {
        when(command: C) {
          const run = () => decider.decide(command, events.reduce(decider.evolve, decider.initialState()));
          return {
            then(expected: E[]) {
              expect(run()).toEqual(expected);
            },
            thenNothingHappens() {
              expect(run()).toEqual([]);
            },
            thenThrows(check: (error: unknown) => boolean | void) {
              let thrown: unknown = undefined;
              try {
                run();
              } catch (error) {
                thrown = error;
              }
              expect(thrown).toBeDefined();
              const verdict = check(thrown);
              if (verdict !== undefined) expect(verdict).toBe(true);
            },
          };
        },
      };
    },
  };
}
