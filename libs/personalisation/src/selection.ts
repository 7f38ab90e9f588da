import { createHash } from 'node:crypto';

/**
 * The A/B split: a stable bucket in [0, 1) from (codops, endpoint, u), so the same client id always lands on the
 * same component of an endpoint, and different endpoints split independently.
 */
export function bucketOf(codops: string, endpoint: string, u: string): number {
  const digest = createHash('sha256').update(`${codops}\u0000${endpoint}\u0000${u.toLowerCase()}`).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** The component whose share of the (normalised) weights holds the bucket; components in configuration order. */
export function componentFor(weights: Record<string, number>, bucket: number): string {
  const entries = Object.entries(weights);
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  let edge = 0;
  for (const [name, weight] of entries) {
    edge += weight / total;
    if (bucket < edge) return name;
  }
  return entries[entries.length - 1][0];
}
