import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A secret kept in DATA_DIR/secrets: created on first use (mode 0600), read afterwards, so every process
 * started on the same data directory agrees on it. Used only when the environment does not provide one.
 */
export function fileSecret(dataDir: string, name: 'jwt-signing' | 'internal-identity' | 'export-callback' | `codops-${string}`): string {
  const dir = join(dataDir, 'secrets');
  const file = join(dir, `${name}.key`);
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (error) {
    // Another process created it between our read and write: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw error;
  }
}
