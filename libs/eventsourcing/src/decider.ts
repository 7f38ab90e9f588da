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

/** Pure functions of an aggregate: no I/O, no clock, no randomness. */
export interface Decider<C extends Command, E extends DomainEvent, S> {
  decide(command: C, state: S): E[];
  evolve(state: S, event: E): S;
  initialState(): S;
  /** Folds events onto `from` (default: the initial state) at once; defaults to reducing with `evolve`. Must agree with it. */
  fold?(events: E[], from?: S): S;
  /** Maps a stored event (possibly of an older version) to the current shape; defaults to the identity. */
  upcast?(type: string, data: Record<string, unknown>): E;
}

/** Domain errors carry a name; the HTTP layer maps names to status codes in one place. */
export class DomainError extends Error {
  constructor(
    readonly kind: 'NotFound' | 'Invalid' | 'Conflict' | 'LimitExceeded' | 'Forbidden',
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = `${kind}Error`;
  }
}

export const notFound = (message: string) => new DomainError('NotFound', message);
export const invalid = (message: string, field?: string) => new DomainError('Invalid', message, field);
export const conflict = (message: string) => new DomainError('Conflict', message);
export const limitExceeded = (message: string, field?: string) => new DomainError('LimitExceeded', message, field);
