import { randomUUID } from 'node:crypto';
import { MongoReadModelStore } from '@udp/readmodel';
import { describeWithMongo } from '@udp/test-kit';
import { redeemedTicketsContract } from './redeemed-tickets.contract';
import { SharedRedeemedTickets } from './redeemed-tickets';

describeWithMongo('redeemed tickets shared in MongoDB', (connection) => {
  // Two replicas, each with its own connection to one database, as two gateway processes have.
  redeemedTicketsContract('shared, in MongoDB', async () => {
    const database = `udp_tickets_${randomUUID().slice(0, 8)}`;
    return [
      new SharedRedeemedTickets(await MongoReadModelStore.connect(connection(), database)),
      new SharedRedeemedTickets(await MongoReadModelStore.connect(connection(), database)),
    ];
  });
});
