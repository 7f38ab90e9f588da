import { Router } from 'express';
import { z } from '@udp/contracts';
import { parseInput } from '@udp/http-kit';
import type { ReadModelStore } from '@udp/readmodel';
import { trendingItems } from '../projections/trending-queries';

export interface InternalRouteDeps {
  /** Where the history projection keeps the trending counts (`trending_items`, `trending_counts`). */
  readModels: ReadModelStore;
  now: () => number;
  trendingWindowMs: number;
  trendingMinUsers: number;
}

const TrendingQuery = z.object({
  size: z
    .string()
    .regex(/^\d{1,3}$/, 'size must be an integer')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 100, 'size must be 1-100')
    .optional(),
});

/**
 * Routes for other parts of the platform (the gateway's personalisation components), not published to clients:
 * the gateway answers 404 for /internal. Behind the signed identity like every route; the answer holds no one's
 * data (only items watched by at least `trendingMinUsers` users, with counts).
 */
export function internalRoutes({ readModels, now, trendingWindowMs, trendingMinUsers }: InternalRouteDeps): Router {
  const router = Router();
  router.get('/internal/history/trending', async (req, res) => {
    const { size } = parseInput(TrendingQuery, req.query, 'query');
    const items = await trendingItems(readModels, {
      now: now(),
      windowMs: trendingWindowMs,
      minUsers: trendingMinUsers,
      limit: size ?? 20,
    });
    res.json({ window_ms: trendingWindowMs, min_users: trendingMinUsers, items });
  });
  return router;
}
