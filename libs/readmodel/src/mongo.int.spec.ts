import { describeWithMongo } from '@udp/test-kit';
import { MongoReadModelStore } from './mongo';
import { readModelContract } from './readmodel.contract';

// tools/servers/with-servers.sh says when MONGO_URL is FerretDB, whose conditional writes are not atomic.
const ferretdb = process.env.MONGO_URL !== undefined && process.env.MONGO_SERVER === 'ferretdb';

describeWithMongo('ReadModelStore contract: mongodb', (connection) => {
  readModelContract('mongodb', () => MongoReadModelStore.connect(connection(), 'udp_contract'), { atomicConditionalWrites: !ferretdb });
});
