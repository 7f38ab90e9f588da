import type { ReadModelStore } from '@udp/readmodel';
import { HttpError } from '@udp/http-kit';

/**
 * Where a redeemed ticket's nonce is remembered until the ticket expires: what makes a ticket good once. A gateway
 * process alone (embedded mode) keeps them in memory; gateway replicas (distributed mode) must share them, or a ticket
 * copied from a URL could be redeemed once at each replica.
 */
export interface RedeemedTickets {
  /** True the first time `nonce` is claimed; false once it was. `expiresAt`: when it may be forgotten (ms). */
  claim(nonce: string, expiresAt: number, now: number): Promise<boolean>;
  close(): Promise<void>;
}

/** One process's memory: at most `maxTickets` (CHANGES_MAX_TICKETS) at a time, a 503 beyond, never unbounded memory. */
export class LocalRedeemedTickets implements RedeemedTickets {
  private readonly used = new Map<string, number>();

  constructor(private readonly maxTickets = 100_000) {}

  async claim(nonce: string, expiresAt: number, now: number): Promise<boolean> {
    if (this.used.has(nonce)) return false;
    // Mostly in expiry order: the expired ones at the front go at once; the rest when the map is full.
    for (const [old, expiry] of this.used) {
      if (expiry > now) break;
      this.used.delete(old);
    }
    if (this.used.size >= this.maxTickets) {
      for (const [old, expiry] of this.used) if (expiry <= now) this.used.delete(old);
    }
    if (this.used.size >= this.maxTickets) throw tooManyTickets();
    this.used.set(nonce, expiresAt);
    return true;
  }

  async close(): Promise<void> {}
}

interface RedeemedTicket {
  _id: string;
  revision: number;
  expires_at: number;
}

/**
 * Every replica's redeemed tickets in one read-model collection (MongoDB in the distributed mode). A claim is an
 * upsert that only the first writer wins: the store's unique `_id` settles two replicas claiming at once. Expired
 * nonces are deleted at most once per `sweepMs` by whichever replica claims next, so the collection holds about one
 * ticket lifetime's worth.
 */
export class SharedRedeemedTickets implements RedeemedTickets {
  private nextSweep = 0;

  constructor(
    private readonly store: ReadModelStore,
    private readonly sweepMs = 30_000,
  ) {}

  async claim(nonce: string, expiresAt: number, now: number): Promise<boolean> {
    const tickets = this.store.collection<RedeemedTicket>('redeemed_tickets');
    if (now >= this.nextSweep) {
      this.nextSweep = now + this.sweepMs;
      await tickets.deleteMany({ expires_at: { $lte: now } });
    }
    return tickets.upsertIfNewer({ _id: nonce, revision: 1, expires_at: expiresAt });
  }

  /** The store is its owner's to close (the gateway shares it with the stream registry). */
  async close(): Promise<void> {}
}

const tooManyTickets = () =>
  new HttpError(503, 'Service Unavailable', 'too many tickets redeemed in the last 30 s (CHANGES_MAX_TICKETS)', undefined, {
    'retry-after': '5',
  });
