import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEV_ISSUER, InternalIdentity, signDevToken } from '@udp/auth';
import { KafkaBus } from '@udp/bus';
import { type StartedProcess, startProcess, waitUntil } from '@udp/test-kit';

/** The real servers of tools/servers/with-servers.sh, and its scripts that stop and start them. */
export const servers = {
  mongoUrl: process.env.MONGO_URL,
  brokers: process.env.KAFKA_BROKERS,
  kafkaScript: process.env.KAFKA_RESTART_SCRIPT,
  ferretdbScript: process.env.FERRETDB_RESTART_SCRIPT,
  /** The event store's PostgreSQL (with-servers.sh, where PostgreSQL is installed): primary, its synchronous replica, their scripts. */
  postgresUrl: process.env.POSTGRES_URL,
  postgresReplicaUrl: process.env.POSTGRES_REPLICA_URL,
  postgresScript: process.env.POSTGRES_RESTART_SCRIPT,
  postgresPromoteScript: process.env.POSTGRES_PROMOTE_SCRIPT,
};

/** Where a deployment keeps its events and read models: one event store file and FerretDB, or PostgreSQL for both. */
export type Store = 'file' | 'postgres';

/** Why the fault suites cannot run here, or null. */
export function serversMissing(store: Store = 'file'): string | null {
  const missing = Object.entries({
    MONGO_URL: servers.mongoUrl,
    KAFKA_BROKERS: servers.brokers,
    KAFKA_RESTART_SCRIPT: servers.kafkaScript,
    FERRETDB_RESTART_SCRIPT: servers.ferretdbScript,
    ...(store === 'postgres'
      ? {
          POSTGRES_URL: servers.postgresUrl,
          POSTGRES_REPLICA_URL: servers.postgresReplicaUrl,
          POSTGRES_RESTART_SCRIPT: servers.postgresScript,
          POSTGRES_PROMOTE_SCRIPT: servers.postgresPromoteScript,
        }
      : {}),
  })
    .filter(([, value]) => !value)
    .map(([name]) => name);
  return missing.length
    ? `${missing.join(', ')} unset (run under bash tools/servers/with-servers.sh${store === 'postgres' ? ', where PostgreSQL is installed' : ''})`
    : null;
}

/** `bash <script> stop|start`: returns once the server is down, or answers again. */
export async function control(script: string, action: 'stop' | 'start'): Promise<void> {
  await promisify(execFile)('bash', [script, action], { timeout: 90_000 });
}

/** `bash $POSTGRES_RESTART_SCRIPT <action> <node>`: the event store's primary or replica restarted, stopped, started or killed. */
export async function controlPostgres(action: 'restart' | 'stop' | 'start' | 'kill', node: 'primary' | 'replica'): Promise<void> {
  await promisify(execFile)('bash', [servers.postgresScript!, action, node], { timeout: 90_000 });
}

/** `bash $POSTGRES_PROMOTE_SCRIPT`: the replica promoted; returns once it takes writes. */
export async function promotePostgresReplica(): Promise<void> {
  await promisify(execFile)('bash', [servers.postgresPromoteScript!], { timeout: 90_000 });
}

/** Built once by global-setup.js (the same directory as paths.js). */
const bundle = join(__dirname, '..', '..', 'tmp', 'faults-dist', 'apps', 'history-svc', 'main.js');

/**
 * One deployment's settings: instances given the same ones share the event store, read models and topics. `postgres`:
 * the event store on POSTGRES_URL and the read models beside it (READMODEL_URL, a schema per service named after
 * MONGO_DB_PREFIX), so a failover to the replica takes both along (streaming replication copies the whole cluster);
 * otherwise the event store file in DATA_DIR and FerretDB.
 */
export function deployment(dataDir: string, store: Store = 'file') {
  return {
    DATA_DIR: dataDir,
    MONGO_URL: servers.mongoUrl,
    MONGO_DB_PREFIX: `faults_${randomUUID().slice(0, 8)}`,
    KAFKA_BROKERS: servers.brokers,
    INTERNAL_AUTH_SECRET: randomBytes(32).toString('base64url'),
    ...(store === 'postgres' ? onPostgres(servers.postgresUrl!) : {}),
  };
}

/**
 * A database of its own on POSTGRES_URL's server (the primary; streaming replication copies it to the replica too),
 * made now, and the URL that names it: a deployment on it sees only its own events, as one on an event store file does.
 * `drop` removes it with whatever connections are left.
 */
export async function ownPostgresDatabase(name: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (!/^[a-z0-9_]{1,63}$/.test(name)) throw new Error(`database name ${JSON.stringify(name)}: [a-z0-9_], at most 63`);
  const { Client } = require('pg') as typeof import('pg');
  const run = async (sql: string) => {
    const client = new Client({ connectionString: servers.postgresUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(servers.postgresUrl!);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** The settings that put a deployment's event store and read models on the PostgreSQL at `url` (the primary, or the promoted replica). */
export function onPostgres(url: string): { EVENTSTORE_URL: string; READMODEL_URL: string } {
  return { EVENTSTORE_URL: url, READMODEL_URL: url };
}

export interface Instance {
  process: StartedProcess;
  url: string;
}

/** The last 20 lines of an instance's log that match `pattern`, printed under `title`: for whoever reads a failed run. */
export function printLogTail(instance: Instance, title: string, pattern: RegExp): void {
  const lines = instance.process
    .output('stdout')
    .split('\n')
    .filter((line) => pattern.test(line));
  process.stdout.write(`${title}:\n${lines.slice(-20).join('\n')}\n`);
}

/** history-svc as its own process (the real entry point, the distributed wiring). */
export async function startHistory(settings: ReturnType<typeof deployment> & Record<string, string | undefined>): Promise<Instance> {
  const started = await startProcess(
    bundle,
    { ...process.env, ...settings, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    {
      stream: 'stdout',
      pattern: /"port":(\d+).*history-svc listening/,
    },
    60_000,
  );
  return { process: started, url: `http://127.0.0.1:${started.ready[1]}` };
}

/**
 * A TCP proxy that hands each new connection to the next of `instances` in turn, as a Kubernetes Service does: the array
 * is read when a connection comes, so instances put in it or taken out later are the ones reached. A connection that
 * comes while it is empty is closed at once.
 */
export async function roundRobin(instances: Instance[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const instance = instances.length ? instances[next++ % instances.length] : undefined;
    if (!instance) return void client.destroy();
    const { hostname, port } = new URL(instance.url);
    const upstream = connect(Number(port), hostname);
    const close = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
    };
    open.add(client);
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A gateway process: its URL and a device's Authorization header for a user. */
export interface Gateway {
  url: string;
  authorization(user: string): Promise<string>;
  stop(): Promise<void>;
}

/** Built once by global-setup.js, beside history-svc. */
const gatewayBundle = join(__dirname, '..', '..', 'tmp', 'faults-dist', 'apps', 'gateway', 'main.js');

/** Starts of a gateway that exited before it listened, as Kubernetes restarts a container that exits: at most these. */
const GATEWAY_STARTS = 3;

/**
 * The gateway as its own process in front of `instances` through a round-robin proxy (`roundRobin`), users' tokens
 * signed with a secret of its own, rate limits out of the way of the writers. A gateway that exits before it listens is
 * started again (up to GATEWAY_STARTS in all): it exits when Kafka answers its first requests with an error, as a broker
 * did seconds after the Kafka outage suite had restarted it ("This server does not host this topic-partition").
 */
export async function startGatewayBefore(instances: Instance[], settings: ReturnType<typeof deployment>): Promise<Gateway> {
  const share = await roundRobin(instances);
  const jwtSecret = randomBytes(32).toString('base64url');
  for (let start = 1; ; start++) {
    try {
      return await gatewayProcess(share, jwtSecret, settings);
    } catch (error) {
      if (start >= GATEWAY_STARTS || !/exited \(\d+\) before it was ready/.test((error as Error).message)) {
        await share.close();
        throw error;
      }
      process.stdout.write(`[faults] the gateway exited before it listened (start ${start}); starting it again\n`);
    }
  }
}

async function gatewayProcess(
  share: Awaited<ReturnType<typeof roundRobin>>,
  jwtSecret: string,
  settings: ReturnType<typeof deployment>,
): Promise<Gateway> {
  const started = await startProcess(
    gatewayBundle,
    {
      ...process.env,
      KAFKA_BROKERS: settings.KAFKA_BROKERS,
      MONGO_URL: settings.MONGO_URL,
      MONGO_DB_PREFIX: `${settings.MONGO_DB_PREFIX}_gw`,
      DATA_DIR: settings.DATA_DIR,
      INTERNAL_AUTH_SECRET: settings.INTERNAL_AUTH_SECRET,
      AUTH_JWT_SECRET: jwtSecret,
      AUTH_JWT_ISSUER: DEV_ISSUER,
      HISTORY_SVC_URL: share.url,
      RATE_LIMIT_PER_USER: '1000000000',
      RATE_LIMIT_PER_ADDRESS: '1000000000',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
    },
    { stream: 'stdout', pattern: /"port":(\d+).*gateway listening/ },
    60_000,
  );
  const tokens = new Map<string, Promise<string>>();
  return {
    url: `http://127.0.0.1:${started.ready[1]}`,
    authorization: (user) => {
      if (!tokens.has(user))
        tokens.set(
          user,
          signDevToken(jwtSecret, user).then((token) => `Bearer ${token}`),
        );
      return tokens.get(user)!;
    },
    stop: async () => {
      await started.stop();
      await share.close();
    },
  };
}

export interface Health {
  status: number;
  checks: Record<string, string>;
}

export async function health(instance: Instance): Promise<Health> {
  const res = await fetch(`${instance.url}/health/`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, checks: res.status === 200 ? {} : ((JSON.parse(text) as { checks?: Record<string, string> }).checks ?? {}) };
}

/** Polls /health/ until it says what `expected` says (a status, and parts that must be DOWN). */
export async function awaitHealth(instance: Instance, expected: { status: number; down?: string }, timeoutMs = 60_000): Promise<Health> {
  let last: Health | null = null;
  await waitUntil(
    async () => {
      last = await health(instance).catch(() => null);
      return last !== null && last.status === expected.status && (!expected.down || last.checks[expected.down] === 'DOWN');
    },
    timeoutMs,
    `health ${JSON.stringify(expected)}`,
  );
  return last!;
}

/**
 * Clients writing history entries without pause, each to its own user, round robin over the instances.
 * A 200 is an acknowledged write; 429 and 503 say nothing was stored (the client retries the same item);
 * anything else is recorded as unexpected.
 */
export class Writers {
  readonly acknowledged = new Map<string, string[]>();
  readonly statuses = new Map<number | string, number>();
  private running = true;
  private readonly loops: Array<Promise<void>>;
  private readonly startedAt = performance.now();
  private stoppedAt: number | undefined;
  private readonly identity: InternalIdentity;

  constructor(
    private readonly instances: Instance[],
    secret: string,
    readonly users: string[],
    writersPerUser = 1,
    /** A pause after each acknowledged write: the offered load (users / pause) kept within what the servers take. */
    private readonly pauseMs = 0,
    /** Writes through this gateway with each user's token, instead of to the instances with the identity header. */
    private readonly gateway?: Pick<Gateway, 'url' | 'authorization'>,
  ) {
    this.identity = new InternalIdentity(secret);
    this.loops = users.flatMap((user) => Array.from({ length: writersPerUser }, (_, w) => this.loop(user, w)));
  }

  get total(): number {
    return [...this.acknowledged.values()].reduce((n, items) => n + items.length, 0);
  }

  /** Acknowledged writes per second, from the start until `stop` (or now). */
  get perSecond(): number {
    return this.total / (((this.stoppedAt ?? performance.now()) - this.startedAt) / 1000);
  }

  count(status: number | string): number {
    return this.statuses.get(status) ?? 0;
  }

  private async loop(user: string, writer: number): Promise<void> {
    for (let i = 0, n = 0; this.running; n++) {
      const itemId = `urn:w${writer}:${i}`;
      let status: number | string;
      try {
        const url = this.gateway ? this.gateway.url : this.instances[n % this.instances.length].url;
        const auth: Record<string, string> = this.gateway
          ? { authorization: await this.gateway.authorization(user) }
          : { 'x-udp-identity': this.identity.sign({ userId: user }) };
        const res = await fetch(`${url}/api/history/v2`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          body: JSON.stringify({ item_id: itemId, last_playback_position: i }),
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        status = res.status;
      } catch (error) {
        status = (error as Error).name;
      }
      this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
      if (status === 200) {
        this.acknowledged.set(user, [...(this.acknowledged.get(user) ?? []), itemId]);
        i++;
        if (this.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
      } else {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.stoppedAt ??= performance.now();
  }
}

/** Every item of a user's history as an instance answers it (deleted ones included). */
export async function historyOf(instance: Instance, secret: string, user: string): Promise<Array<{ item_id: string; id: number }>> {
  const res = await fetch(`${instance.url}/api/history/v2?limit=1000&with_deleted=true`, {
    headers: { 'x-udp-identity': new InternalIdentity(secret).sign({ userId: user }) },
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 200) throw new Error(`history of ${user}: ${res.status}`);
  return ((await res.json()) as { data: Array<{ item_id: string; id: number }> }).data;
}

/** The history topic, read by a consumer group of its own from the start (the topic name is the contract). */
/** Calls history-svc at `url` as `user`, with the identity the gateway would sign. */
export function historyCaller(url: string, internalAuthSecret: string) {
  const identity = new InternalIdentity(internalAuthSecret);
  return (user: string, method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-udp-identity': identity.sign({ userId: user }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
}

/**
 * Other users at work beside a fault: four loops, each writing one entry of one of `users` then reading that user's
 * page, 20 ms apart; each round's time goes to `sample`, a round not answered 200 twice to `failures`.
 */
export function othersAtWork(call: ReturnType<typeof historyCaller>, users: string[], sample: (ms: number) => void) {
  const failures: string[] = [];
  let running = true;
  const loops = [0, 1, 2, 3].map(async (n) => {
    for (let i = n; running; i += 4) {
      const who = users[i % users.length];
      const started = performance.now();
      const wrote = await call(who, 'POST', '/api/history/v2', { item_id: `urn:other:${i}`, last_playback_position: i });
      await wrote.arrayBuffer();
      const read = await call(who, 'GET', '/api/history/v2?limit=10');
      await read.arrayBuffer();
      sample(performance.now() - started);
      if (wrote.status !== 200 || read.status !== 200) failures.push(`${wrote.status}/${read.status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
  return {
    failures,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

export const HISTORY_TOPIC = 'user-data.history.v1';

export interface Delivered {
  user: string;
  revision: number;
  eventId: string;
}

export async function collectHistoryMessages(users: string[]): Promise<{ messages: Delivered[]; stop(): Promise<void> }> {
  // A short session: after a broker restart a new member of the group waits for the old one's session to end.
  const bus = new KafkaBus(servers.brokers!.split(','), `faults-${randomUUID().slice(0, 8)}`, {
    sessionTimeoutMs: 6000,
    heartbeatIntervalMs: 1000,
  });
  const messages: Delivered[] = [];
  await bus.subscribe(HISTORY_TOPIC, `faults-${randomUUID()}`, async (m) => {
    if (users.includes(m.key)) messages.push({ user: m.key, revision: Number(m.value.revision), eventId: m.headers?.['event-id'] ?? '' });
  });
  return { messages, stop: () => bus.close() };
}

/**
 * What a consumer that applies each event id once ends up with: per user, the revisions in first-delivery
 * order, and how many deliveries were repeats of an event id already seen (at-least-once redelivery).
 */
export function applyOnce(messages: Delivered[]): { revisions: Map<string, number[]>; repeats: number } {
  const seen = new Set<string>();
  const revisions = new Map<string, number[]>();
  let repeats = 0;
  for (const m of messages) {
    if (seen.has(m.eventId)) {
      repeats++;
      continue;
    }
    seen.add(m.eventId);
    revisions.set(m.user, [...(revisions.get(m.user) ?? []), m.revision]);
  }
  return { revisions, repeats };
}

export const range = (n: number) => Array.from({ length: n }, (_, i) => i);
