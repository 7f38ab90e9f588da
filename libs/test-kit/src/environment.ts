import { execFileSync } from 'node:child_process';

/**
 * Why testcontainers cannot start servers here, or null when they can: a Docker engine must answer, and
 * testcontainers 12 (the line with a KurrentDB module) needs Node 22.22 or newer.
 */
export function containersUnavailable(): string | null {
  if (!dockerAvailable()) return 'no Docker engine is available';
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 22 || (major === 22 && minor < 22)) return `testcontainers 12 needs Node >= 22.22 (this is ${process.version})`;
  return null;
}

/** True when a Docker engine answers. */
export function dockerAvailable(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

/** Polls a condition on the event loop (no fixed sleeps); fails after the timeout. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Says plainly, once per suite, that an integration suite did not run and why. */
export function reportSkipped(suite: string, reason: string): void {
  // Straight to stderr: jest drops the console output of a suite whose tests were all skipped.
  process.stderr.write(`[integration] ${suite} SKIPPED: ${reason}\n`);
  describe(suite, () => {
    it.skip(`skipped: ${reason}`, () => undefined);
  });
}
