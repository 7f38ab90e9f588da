import { describeWithMongo } from '@udp/test-kit';
import { MongoReadModelStore } from './mongo';
import { readModelContract } from './readmodel.contract';

describeWithMongo('ReadModelStore contract: mongodb', (connection) => {
  readModelContract('mongodb', () => MongoReadModelStore.connect(connection(), 'udp_contract'));
});
