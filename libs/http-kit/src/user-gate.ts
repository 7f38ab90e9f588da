import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './problem';

/** The refusal's title: its problem type is `https://problems.udp.example/erasure-pending`, as the gateway's. */
const TITLE = 'Erasure Pending';
const RETRY_AFTER_S = '2';

/**
 * A service's side of the erasure boundary (docs/erasure.md): while the service erases a user, that user's requests are
 * refused (409 `erasure-pending`), and the erasure starts only once the requests already under way have ended. So no
 * write lands between the deletion of the user's streams and that of their documents (where a new stream's first
 * revisions would be refused by the old documents, and then deleted with them), and no read sees a half-erased user.
 * The gateway holds the user's requests for the whole erasure; this covers what it cannot see (requests already
 * forwarded, and replicas that hear of the erasure later).
 */
export class UserGate {
  /** Requests under way per user. */
  private readonly inFlight = new Map<string, number>();
  /** Users being erased here, and who waits for their requests under way to end. */
  private readonly closed = new Map<string, { drained: Promise<void>; resolve: () => void }>();

  /** Middleware after the caller is known: a closed user's request is refused; any other is counted until it ends. */
  readonly check = (_req: Request, res: Response, next: NextFunction): void => {
    const userId = res.locals.userId as string | undefined;
    if (userId === undefined) return next();
    if (this.closed.has(userId))
      return next(new HttpError(409, TITLE, "this user's data is being erased: retry", undefined, { 'retry-after': RETRY_AFTER_S }));
    this.inFlight.set(userId, (this.inFlight.get(userId) ?? 0) + 1);
    // 'close' comes once, however the answer ends (sent, failed, or its client gone).
    res.once('close', () => this.leave(userId));
    next();
  };

  /** Refuses the user's new requests and resolves once their requests under way have ended. */
  close(userId: string): Promise<void> {
    let entry = this.closed.get(userId);
    if (!entry) {
      let resolve!: () => void;
      const drained = new Promise<void>((r) => (resolve = r));
      this.closed.set(userId, (entry = { drained, resolve }));
      if (!this.inFlight.has(userId)) resolve();
    }
    return entry.drained;
  }

  /** The user's requests are taken again. */
  open(userId: string): void {
    this.closed.delete(userId);
  }

  private leave(userId: string): void {
    const left = (this.inFlight.get(userId) ?? 1) - 1;
    if (left > 0) return void this.inFlight.set(userId, left);
    this.inFlight.delete(userId);
    this.closed.get(userId)?.resolve();
  }
}
