/** An event as the domain sees it: a type and its data. */
export interface DomainEvent<Type extends string = string, Data extends object = object> {
  type: Type;
  data: Data;
}

/** A command carries its own time and ids (metadata.now), so deciders never read the clock. */
export interface Command<Type extends string = string, Data extends object = object> {
  type: Type;
  data: Data;
  metadata: { now: number };
}

/**
 * A command before its metadata is added, kept a discriminated union: `{ ...command, metadata }` of an
 * `Unstamped<MyCommand>` is a `MyCommand` without a cast (a plain `Omit` would merge the union's members).
 */
export type Unstamped<C extends Command> = C extends Command ? Omit<C, 'metadata'> : never;

/** Pure functions of an aggregate: no I/O, no clock, no randomness. */
export interface Decider<C extends Command, E extends DomainEvent, S> {
  decide(command: C, state: S): E[];
  evolve(state: S, event: E): S;
  initialState(): S;
  /**
   * Folds `events` onto `from`: the initial state, a state remembered by the command handler's cache, or a
   * snapshot. It never changes `from` (a cached state may be in use by another request) and agrees with reducing
   * by `evolve`. Required, so no aggregate can silently fold from the initial state: build it with
   * `foldByEvolve` or `copyOnWrite`.
   */
  fold(events: readonly E[], from: S): S;
}

/** `fold` as a reduce over `evolve`: for aggregates whose state is small (a profile, a catalogue item). */
export function foldByEvolve<S, E>(evolve: (state: S, event: E) => S): (events: readonly E[], from: S) => S {
  return (events, from) => events.reduce(evolve, from);
}

/**
 * `evolve` and `fold` of an aggregate whose state holds large collections (a user's history, playlists):
 * `copy` makes a state the caller may change, `apply` changes it by one event. `fold` copies once for all its
 * events; `evolve` (one event) copies each time, so a stream is always folded, never reduced by `evolve`.
 *
 * Why not immutable updates in `evolve` alone: each event would copy the collections, O(n²) over a stream
 * (docs/performance.md, "Folding a long stream").
 */
export function copyOnWrite<S, M extends S, E>(copy: (state: S) => M, apply: (state: M, event: E) => void) {
  const fold = (events: readonly E[], from: S): S => {
    if (events.length === 0) return from;
    const state = copy(from);
    for (const event of events) apply(state, event);
    return state;
  };
  const evolve = (state: S, event: E): S => fold([event], state);
  return { evolve, fold };
}

/** Domain errors carry a name; the HTTP layer maps names to status codes in one place. */
export class DomainError extends Error {
  constructor(
    readonly kind: 'NotFound' | 'Invalid' | 'Conflict' | 'LimitExceeded' | 'TooLarge' | 'QuotaExceeded' | 'Forbidden',
    message: string,
    readonly field?: string,
    /** The per-user quota a `QuotaExceeded` ran into: its setting's name and value (the answer names them). */
    readonly quota?: { limit: string; max: number },
  ) {
    super(message);
    this.name = `${kind}Error`;
  }
}

export const notFound = (message: string) => new DomainError('NotFound', message);
export const invalid = (message: string, field?: string) => new DomainError('Invalid', message, field);
export const conflict = (message: string) => new DomainError('Conflict', message);
export const limitExceeded = (message: string, field?: string) => new DomainError('LimitExceeded', message, field);
/** What a write would store is larger than one thing may be (a preference document): 413. */
export const tooLarge = (message: string) => new DomainError('TooLarge', message);
/** A per-user quota (what a user may store in all, not what one request may hold): 422 naming the setting. */
export const quotaExceeded = (message: string, limit: string, max: number) =>
  new DomainError('QuotaExceeded', message, undefined, { limit, max });
