/** Thrown when the stream kept changing under us: the HTTP layer answers 429 with Retry-After. */
export class ConcurrencyConflictError extends Error {
  override readonly name = 'ConcurrencyConflictError';
  constructor(
    readonly streamId: string,
    readonly attempts: number,
  ) {
    super(`stream ${streamId} changed concurrently (${attempts} attempt(s))`);
  }
}
