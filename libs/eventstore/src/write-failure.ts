/**
 * The last write a store could not make (disk full, I/O error, server refusing writes), for its health check:
 * while one is remembered the store reports DOWN, since reads alone would still answer. A successful write
 * forgets it; so does time, for a store that cannot try a write of its own (`forgetAfterMs`), so that a check
 * that took an instance out of service does not keep it out after the cause is gone.
 */
export class LastWriteFailure {
  private failure: { message: string; at: number } | null = null;

  constructor(
    private readonly forgetAfterMs = Number.POSITIVE_INFINITY,
    private readonly now: () => number = Date.now,
  ) {}

  failed(error: unknown): void {
    this.failure = { message: error instanceof Error ? error.message : String(error), at: this.now() };
  }

  succeeded(): void {
    this.failure = null;
  }

  /** What failed, while remembered; null when the last write succeeded (or none failed). */
  current(): string | null {
    if (this.failure && this.now() - this.failure.at > this.forgetAfterMs) this.failure = null;
    return this.failure?.message ?? null;
  }
}
