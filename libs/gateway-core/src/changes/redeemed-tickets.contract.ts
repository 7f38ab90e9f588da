import { randomUUID } from 'node:crypto';
import type { RedeemedTickets } from './redeemed-tickets';

/**
 * What every keeper of redeemed tickets must do (redeemed-tickets.ts). `open` gives two replicas' views: the same
 * keeper for one that serves a single process, two instances over one store for a shared one.
 */
export function redeemedTicketsContract(adapter: string, open: () => Promise<[RedeemedTickets, RedeemedTickets]>) {
  describe(`Redeemed tickets contract: ${adapter}`, () => {
    let one: RedeemedTickets;
    let two: RedeemedTickets;
    beforeEach(async () => {
      [one, two] = await open();
    });
    afterEach(async () => {
      await one.close();
      if (two !== one) await two.close();
    });
    const now = 1_000_000;

    it('lets a nonce be claimed once, at whichever replica', async () => {
      const nonce = randomUUID();
      expect(await one.claim(nonce, now + 30_000, now)).toBe(true);
      expect(await two.claim(nonce, now + 30_000, now + 1)).toBe(false);
      expect(await one.claim(nonce, now + 30_000, now + 2)).toBe(false);
      expect(await two.claim(randomUUID(), now + 30_000, now + 3)).toBe(true);
    });

    it('lets exactly one of many claims made at once win', async () => {
      const nonce = randomUUID();
      const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).claim(nonce, now + 30_000, now)));
      expect(claims.filter(Boolean)).toHaveLength(1);
    });

    it('forgets a nonce once its ticket has expired', async () => {
      const nonce = randomUUID();
      expect(await one.claim(nonce, now + 30_000, now)).toBe(true);
      // A claim after the expiry (and after the shared keeper's sweep interval) finds it forgotten.
      expect(await one.claim(randomUUID(), now + 100_000, now + 60_000)).toBe(true);
      expect(await two.claim(nonce, now + 100_000, now + 60_001)).toBe(true);
    });
  });
}
