/**
 * One event loop serves every user: work that grows with one user's data (an erasure, a long batch) runs in slices
 * and lets other requests in between. `slice()` resolves at once while the current slice is under `budgetMs`, and
 * otherwise after a turn of the event loop (setImmediate: timers and sockets run first), starting a new slice.
 */
export function timeSlices(budgetMs = 5): { slice(): Promise<void> } {
  let sliceStart = performance.now();
  return {
    async slice() {
      if (performance.now() - sliceStart < budgetMs) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    },
  };
}
