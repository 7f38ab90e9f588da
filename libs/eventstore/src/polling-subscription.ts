import type { EventHandler, RecordedEvent, Subscription, SubscriptionOptions } from './port';

/**
 * A subscription for stores that can read "everything after position P": it pulls pages in order and is
 * woken by `notify()` after each commit. Pulling (instead of pushing from the writer) means catch-up and
 * live delivery are one code path, so nothing is skipped or delivered twice at the hand-over.
 */
export class PollingSubscription implements Subscription {
  private position: bigint | undefined;
  private running = true;
  private pulling: Promise<void> | null = null;
  private again = false;
  private failure: unknown = null;

  constructor(
    private readonly options: SubscriptionOptions,
    private readonly readAfter: (position: bigint | undefined, limit: number) => RecordedEvent[] | Promise<RecordedEvent[]>,
    private readonly handler: EventHandler,
    private readonly onStop: () => void,
  ) {
    this.position = options.fromPosition;
    this.notify();
  }

  notify(): void {
    if (!this.running) return;
    if (this.pulling) {
      this.again = true;
      return;
    }
    this.pulling = this.pull().finally(() => {
      this.pulling = null;
      if (this.again && this.running) {
        this.again = false;
        this.notify();
      }
    });
  }

  private async pull(): Promise<void> {
    try {
      for (;;) {
        const page = await this.readAfter(this.position, 500);
        for (const event of page) {
          if (!this.running) return;
          this.position = event.position;
          if (this.options.streamPrefixes.some((p) => event.streamId.startsWith(p))) await this.handler(event);
        }
        if (page.length < 500) return;
      }
    } catch (error) {
      this.failure = error;
      this.running = false;
    }
  }

  async caughtUp(): Promise<void> {
    for (;;) {
      this.notify();
      const current = this.pulling;
      if (current) await current;
      if (this.failure) throw this.failure;
      if (!this.again && this.pulling === null) return;
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.pulling) await this.pulling;
    this.onStop();
  }
}
