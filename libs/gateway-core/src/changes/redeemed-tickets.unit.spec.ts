import { MemoryReadModelStore } from '@udp/readmodel';
import { redeemedTicketsContract } from './redeemed-tickets.contract';
import { LocalRedeemedTickets, SharedRedeemedTickets } from './redeemed-tickets';

redeemedTicketsContract('one process (memory)', async () => {
  const tickets = new LocalRedeemedTickets();
  return [tickets, tickets];
});

redeemedTicketsContract('shared, over one read-model store (in memory)', async () => {
  // Two replicas over one store.
  const store = new MemoryReadModelStore();
  return [new SharedRedeemedTickets(store), new SharedRedeemedTickets(store)];
});

describe('one process (memory)', () => {
  it('answers 503 rather than remember more than its cap of unexpired tickets', async () => {
    const tickets = new LocalRedeemedTickets(2);
    expect(await tickets.claim('a', 2_000, 1_000)).toBe(true);
    expect(await tickets.claim('b', 2_000, 1_000)).toBe(true);
    await expect(tickets.claim('c', 2_000, 1_000)).rejects.toMatchObject({ status: 503 });
    // Once the first two have expired, there is room again.
    expect(await tickets.claim('c', 4_000, 2_000)).toBe(true);
  });
});
