import { randomUUID } from 'node:crypto';
import { MongoReadModelStore } from '@udp/readmodel';
import { describeWithMongo } from '@udp/test-kit';
import { redeemedTicketsContract } from './redeemed-tickets.contract';
import { SharedRedeemedTickets } from './redeemed-tickets';

describeWithMongo('redeemed tickets shared in MongoDB', (connection) => {
  // Two replicas, each with its own connection to one database, as two gateway processes have.
  const stores: MongoReadModelStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });
  redeemedTicketsContract('shared, in MongoDB', async () => {
    const database = `udp_tickets_${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 2; i++) stores.push(await MongoReadModelStore.connect(connection(), database));
    return [new SharedRedeemedTickets(stores[0]), new SharedRedeemedTickets(stores[1])];
  });
});
