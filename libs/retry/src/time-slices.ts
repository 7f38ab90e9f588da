/**
 * One event loop serves every user: work that grows with one user's data (an erasure, a long batch) runs in slices
 * and lets other requests in between. `slice()` resolves at once while the current slice is under `budgetMs`, and
 * otherwise in a later turn of the event loop (`nextTurn`), starting a new slice.
 */
export function timeSlices(budgetMs = 5): { slice(): Promise<void> } {
  let sliceStart = performance.now();
  return {
    async slice() {
      if (performance.now() - sliceStart < budgetMs) return;
      await nextTurn();
      sliceStart = performance.now();
    },
  };
}

/**
 * How long the sliced work resumed in one turn of the event loop may take together before the rest waits for the next
 * turn (at least one piece is resumed each turn).
 */
export const TURN_BUDGET_MS = 1;

/** Sliced work waiting for its next slice, oldest first. */
const waiting: Array<() => void> = [];

/** When the current turn's sliced work began (`slot`); null between turns. */
let turnStart: number | null = null;

/**
 * Resolves in a later turn of the event loop, after the timers and sockets of that turn, once the sliced work resumed
 * before it in that turn has taken less than `TURN_BUDGET_MS`; otherwise in the turn after, and so on. Work is resumed
 * oldest first: one that yields again waits behind every piece already waiting.
 *
 * With each piece of work resumed in the next turn whatever the others took, a turn ran a slice of every piece: two
 * 5,000-entry batches, their rows, the trending projector and the change publisher made turns of 20-35 ms, and a
 * single write of another user waited for one at each of its three or four steps. Resumed one piece a turn, the
 * projectors fell behind under a flood of single writes, and a mobile sync's push after it waited 0.75-1.6 s for their
 * backlog. Within a budget a turn, each piece still gets its slice when slices are short, and no turn is long.
 */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    // A slot for it: an immediate callback that resumes the oldest piece waiting, or, past the budget, goes on to the
    // next turn. Which piece is resumed is the queue's order, not the slots': a piece that yields again while others
    // wait, deferred from an earlier turn, is resumed after them (its slot may come first).
    setImmediate(slot);
  });
}

/** Whether sliced work waits for its next slice (a turn's check phase will resume some of it). */
export function slicedWorkWaiting(): boolean {
  return waiting.length > 0;
}

function slot(): void {
  const now = performance.now();
  if (turnStart === null) {
    // The first of this turn: the turn's budget starts now. The turn is closed by an immediate queued now, which runs
    // first in the next turn's check phase, before anything queued later (the deferred slots below, new ones).
    turnStart = now;
    setImmediate(() => (turnStart = null));
  } else if (now - turnStart >= TURN_BUDGET_MS) {
    // Each immediate callback is followed by its microtasks: the work resumed before this one has run its slice.
    setImmediate(slot);
    return;
  }
  waiting.shift()?.();
}
