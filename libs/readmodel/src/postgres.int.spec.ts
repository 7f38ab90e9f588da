import { randomUUID } from 'node:crypto';
import { reportSkipped } from '@udp/test-kit';
import { PostgresReadModelStore } from './postgres';
import { readModelContract } from './readmodel.contract';

/**
 * PostgreSQL: POSTGRES_URL (tools/servers/with-servers.sh starts a server and sets it); skipped, saying so, without it.
 * The run's collections are in a schema of its own, dropped at the end.
 */
const url = process.env.POSTGRES_URL;
const schema = `udp_contract_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

if (!url) {
  reportSkipped('ReadModelStore contract: postgresql', 'POSTGRES_URL is unset (tools/servers/with-servers.sh sets it)');
} else {
  afterAll(async () => {
    const { Client } = require('pg') as typeof import('pg');
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end();
    }
  });

  readModelContract('postgresql', () => PostgresReadModelStore.connect(url, schema));
}
