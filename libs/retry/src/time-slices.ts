/**
 * One event loop serves every user: work that grows with one user's data (an erasure, a long batch) runs in slices
 * and lets other requests in between. `slice()` resolves at once while the current slice is under `budgetMs`, and
 * otherwise when this work's turn comes (`nextTurn`), starting a new slice.
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

/** Sliced work waiting for its next slice, oldest first. */
const waiting: Array<() => void> = [];
let resuming = false;

/**
 * Resolves in a later turn of the event loop, after the timers and sockets of that turn. All sliced work shares one
 * queue and one slice is resumed per turn, round robin: with each piece of work taking its own `setImmediate`, every
 * one ran a slice in the same turn, and a request waited for all of them at each of its steps (two 5,000-entry
 * batches, their inline rows, trending and the change publisher made turns of 20-35 ms, and a single write of
 * another user took 60-120 ms across its three or four turns).
 */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!resuming) {
      resuming = true;
      setImmediate(resumeNext);
    }
  });
}

function resumeNext(): void {
  const next = waiting.shift();
  // Queued from within this turn's immediates, the next one runs in the next turn, after its timers and sockets.
  if (waiting.length > 0) setImmediate(resumeNext);
  else resuming = false;
  next?.();
}
