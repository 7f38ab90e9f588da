import { timingSafeEqual, createHash } from 'node:crypto';
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

/** Wrong secrets per client address: at most `limit` per `windowMs`, then 429 until the window passes. */
export class FailureLimiter {
  private readonly failures = new Map<string, { count: number; since: number }>();
  constructor(
    private readonly limit = 5,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
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
      if (this.failures.size > 100_000) this.failures.clear();
      this.failures.set(key, { count: 1, since: now });
    } else entry.count++;
  }
}
