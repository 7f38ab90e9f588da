import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The identity the gateway vouches for, carried to services in one header: `v1.<user>.<expiry>.<hmac>`.
 * An HMAC over the user id and expiry with a secret only the gateway and the services hold: a client that
 * sends the header itself cannot forge it, and checking it costs microseconds on every request.
 */
export const IDENTITY_HEADER = 'x-udp-identity';
const VERSION = 'v1';

export interface Identity {
  userId: string;
}

export class InternalIdentity {
  private readonly key: Buffer;

  constructor(
    secret: string,
    private readonly ttlMs = 60_000,
  ) {
    this.key = Buffer.from(secret, 'utf8');
  }

  sign(identity: Identity, now = Date.now()): string {
    const user = Buffer.from(identity.userId, 'utf8').toString('base64url');
    const expiry = String(now + this.ttlMs);
    return `${VERSION}.${user}.${expiry}.${this.mac(user, expiry)}`;
  }

  /** The identity in a header value, or null when it is missing, forged or expired. */
  verify(value: string | undefined, now = Date.now()): Identity | null {
    if (!value) return null;
    const parts = value.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) return null;
    const [, user, expiry, mac] = parts;
    const expected = Buffer.from(this.mac(user, expiry));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    if (!/^\d+$/.test(expiry) || Number(expiry) < now) return null;
    const userId = Buffer.from(user, 'base64url').toString('utf8');
    return userId ? { userId } : null;
  }

  /**
   * A key for another purpose (e.g. `history-etag`), derived from the secret: every process that holds the secret
   * derives the same key, and nothing made with it tells the secret or the identity values' MACs (their input
   * begins `v1.`, a derivation's `derive:`).
   */
  derivedKey(purpose: string): Buffer {
    return createHmac('sha256', this.key).update(`derive:${purpose}`).digest();
  }

  private mac(user: string, expiry: string): string {
    return createHmac('sha256', this.key).update(`${VERSION}.${user}.${expiry}`).digest('base64url');
  }
}
