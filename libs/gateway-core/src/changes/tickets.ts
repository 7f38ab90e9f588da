import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { unauthorized } from '@udp/http-kit';
import { LocalRedeemedTickets, type RedeemedTickets } from './redeemed-tickets';

/** How long a ticket is good for, from its issue (the issue's 30 s: enough to open an EventSource, short in a log). */
export const TICKET_TTL_S = 30;

/**
 * Single-use tickets for browsers' EventSource, which cannot send an Authorization header (`GET /api/changes?ticket=`).
 * A ticket is the user id and its expiry, sealed (AES-256-GCM, a key every replica derives from INTERNAL_AUTH_SECRET):
 * unreadable in a URL, unforgeable, and good at any replica. Single use is kept by `redeemed`: shared by the replicas
 * in the distributed mode (redeemed-tickets.ts).
 */
export class TicketIssuer {
  private readonly now: () => number;
  private readonly redeemed: RedeemedTickets;

  constructor(
    private readonly key: Buffer,
    options: { now?: () => number; redeemed?: RedeemedTickets } = {},
  ) {
    this.now = options.now ?? Date.now;
    this.redeemed = options.redeemed ?? new LocalRedeemedTickets();
  }

  issue(userId: string): { ticket: string; expires_in: number } {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const sealed = Buffer.concat([
      cipher.update(JSON.stringify({ u: userId, e: this.now() + TICKET_TTL_S * 1000 }), 'utf8'),
      cipher.final(),
    ]);
    return { ticket: Buffer.concat([nonce, cipher.getAuthTag(), sealed]).toString('base64url'), expires_in: TICKET_TTL_S };
  }

  /**
   * The user a ticket was issued to, without spending it; a 401 for one unknown, altered or expired. A stream checks
   * everything else (its cursor, the caps) with this, and spends the ticket (`redeem`) only when it opens.
   */
  userOf(ticket: string): string {
    return this.open(ticket).claims.u;
  }

  /** The user a ticket was issued to, once; a 401 for one unknown, altered, expired or already used. */
  async redeem(ticket: string): Promise<string> {
    const now = this.now();
    const { claims, nonce } = this.open(ticket);
    if (!(await this.redeemed.claim(nonce, claims.e, now))) {
      throw unauthorized('the ticket was already used (each is good once): ask for a new one');
    }
    return claims.u;
  }

  private open(ticket: string): { claims: { u: string; e: number }; nonce: string } {
    const bytes = Buffer.from(ticket, 'base64url');
    let claims: { u: string; e: number };
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(12, 28));
      claims = JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')) as typeof claims;
    } catch {
      throw unauthorized('the ticket is not one this API issued');
    }
    if (!(this.now() < claims.e)) throw unauthorized('the ticket has expired (tickets are good for 30 s): ask for a new one');
    return { claims, nonce: bytes.subarray(0, 12).toString('base64url') };
  }

  close(): Promise<void> {
    return this.redeemed.close();
  }
}
