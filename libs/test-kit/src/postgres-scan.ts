import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Test support for the erasure tests on PostgreSQL: which files under the data dirs hold any of `needles` (the raw
 * bytes, as a server keeps them), and a replica brought to the primary's end of WAL with a restartpoint made, so it has
 * removed what the primary's checkpoint let go.
 */
export function filesHolding(dirs: readonly string[], needles: readonly Buffer[]): Map<string, string[]> {
  const hits = new Map<string, string[]>();
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return; // removed meanwhile
    }
    for (const name of names) {
      const path = join(dir, name);
      let content: Buffer;
      try {
        const stat = statSync(path);
        if (stat.isDirectory()) {
          walk(path);
          continue;
        }
        if (!stat.isFile()) continue;
        content = readFileSync(path);
      } catch {
        continue; // removed between the listing and the read
      }
      needles.forEach((needle, i) => {
        if (content.includes(needle)) hits.set(String(i), [...(hits.get(String(i)) ?? []), path]);
      });
    }
  };
  for (const dir of dirs) walk(dir);
  return hits;
}

/** POSTGRES_DATA_DIRS (tools/servers/with-servers.sh): the primary's data dir, then the replica's. */
export const postgresDataDirs = (): string[] => (process.env.POSTGRES_DATA_DIRS ?? '').split(':').filter(Boolean);

type Queryable = { query: (text: string, values?: unknown[]) => Promise<{ rows: Array<Record<string, unknown>> }> };

/** Waits (polling, bounded) until the replica has replayed the primary's WAL up to now, then makes a restartpoint. */
export async function replicaCaughtUpAndCheckpointed(primary: Queryable, replica: Queryable, timeoutMs = 30_000): Promise<void> {
  const [{ lsn }] = (await primary.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [{ replayed }] = (await replica.query('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS replayed', [lsn])).rows;
    if (replayed) break;
    if (Date.now() > deadline) throw new Error(`the replica did not replay up to ${String(lsn)} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await replica.query('CHECKPOINT');
}
