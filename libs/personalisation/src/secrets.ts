import { timingSafeEqual, createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { fileSecret } from '@udp/auth';

/**
 * The codops secrets that unlock the debug block. Distributed mode: CODOPS_SECRETS (`codops:secret,...`).
 * Otherwise (embedded): one secret per configured codops, created in DATA_DIR/secrets (`npm run codops-secret -- <codops>`).
 */
export function loadCodopsSecrets(codops: string[], env: NodeJS.ProcessEnv, dataDir: string): Map<string, string> {
  const secrets = new Map<string, string>();
  if (env.CODOPS_SECRETS) {
    for (const pair of env.CODOPS_SECRETS.split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const at = pair.indexOf(':');
      if (at <= 0 || at === pair.length - 1) throw new Error('CODOPS_SECRETS must be codops:secret,... (a pair has no secret)');
      const secret = pair.slice(at + 1);
      if (secret.length < 16) throw new Error(`CODOPS_SECRETS: the secret of ${pair.slice(0, at)} must be at least 16 characters`);
      secrets.set(pair.slice(0, at), secret);
    }
    return secrets;
  }
  for (const name of codops) secrets.set(name, codopsFileSecret(dataDir, name));
  return secrets;
}

export const codopsFileSecret = (dataDir: string, codops: string) => fileSecret(dataDir, `codops-${codops}`);

/** Constant-time comparison (hashes first, so lengths leak nothing either). */
export function secretMatches(expected: string | undefined, given: string): boolean {
  if (!expected) return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}

/**
 * The lockout bucket of a wrong debug secret: the codops and the client. The client is the address Express gives
 * (`req.ip`: the socket's peer, or the client an ingress named when the gateway trusts it as a proxy; a header a
 * client sends itself changes nothing otherwise), an IPv6 client by its /64 (one subscriber's network: rotating
 * addresses within it would otherwise give fresh buckets).
 */
export function lockoutKey(codops: string, address: string | undefined): string {
  return `${codops}\u0000${clientOf(address ?? '')}`;
}

function clientOf(address: string): string {
  const plain = address.split('%')[0];
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain)?.[1];
  if (mapped || isIPv4(plain)) return mapped ?? plain;
  if (!isIPv6(plain)) return plain;
  const [head, tail] = plain.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const full = [...left, ...new Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${full
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** Wrong secrets per lockout key: at most `limit` per `windowMs`, then 429 until the window passes. */
export class FailureLimiter {
  private readonly failures = new Map<string, { count: number; since: number }>();
  constructor(
    private readonly limit = 5,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 100_000,
  ) {}

  blocked(key: string): number | null {
    const entry = this.failures.get(key);
    if (!entry) return null;
    const left = entry.since + this.windowMs - this.now();
    if (left <= 0) {
      this.failures.delete(key);
      return null;
    }
    return entry.count >= this.limit ? Math.ceil(left / 1000) : null;
  }

  fail(key: string): void {
    const now = this.now();
    const entry = this.failures.get(key);
    if (!entry || entry.since + this.windowMs <= now) {
      this.failures.delete(key);
      if (this.failures.size >= this.maxKeys) this.evictOne(now);
      this.failures.set(key, { count: 1, since: now });
    } else entry.count++;
  }

  /**
   * A bound against many keys. It used to clear every entry at once, so a client with many addresses could lift
   * every lockout, its own included; now it forgets one entry, the oldest that is not locked out (or expired), and
   * only when the oldest 1000 are all locked out, the oldest of them.
   */
  private evictOne(now: number): void {
    let checked = 0;
    for (const [key, entry] of this.failures) {
      if (entry.count < this.limit || entry.since + this.windowMs <= now) return void this.failures.delete(key);
      if (++checked >= 1000) break;
    }
    this.failures.delete(this.failures.keys().next().value as string);
  }
}
