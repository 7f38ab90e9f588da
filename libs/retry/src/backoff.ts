/**
 * How long to wait before a retry: the pause doubles with each attempt up to a cap, and is drawn at random below
 * that (jitter), so that the many callers that failed together (a store or a broker back after an outage) do not all
 * come back at the same instant. Every retry loop of the platform takes its pauses from here; the loop itself (what
 * ends it, what may wake it early) stays with its caller.
 */
export interface BackoffOptions {
  /** The pause before the first retry (attempt 1); doubled for each later attempt. */
  baseMs: number;
  /** The longest pause, whatever the attempt. */
  maxMs: number;
  /**
   * `equal` (the default): in the upper half of the doubled pause, so a retry never comes much sooner than planned.
   * `full`: anywhere from 0 to it, which spreads retries the most.
   */
  jitter?: 'equal' | 'full';
  /** A number in [0, 1): tests pass a fixed one. */
  random?: () => number;
}

/** The pause before retry number `attempt` (1 for the first retry). */
export function backoffDelayMs(attempt: number, { baseMs, maxMs, jitter = 'equal', random = Math.random }: BackoffOptions): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return jitter === 'full' ? random() * ceiling : ceiling / 2 + random() * (ceiling / 2);
}
