import { type Socket, connect as connectSocket } from 'node:net';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { Admin, Consumer as KafkaConsumer, EachMessagePayload, ISocketFactory, Kafka, KafkaConfig, Producer } from 'kafkajs';
import { backoffDelayMs } from '@udp/retry';
import { METRICS, observeGauge } from '@udp/telemetry';
import { inConsumerSpan } from './consumer-span';
import type { Bus, BusMessage, Consumer, MessageHandler, SubscribeOptions } from './port';

/** Times a new topic is asked for before its creation is taken as failed (some 5-7 s with the pauses). */
const TOPIC_READY_ATTEMPTS = 8;

export interface KafkaBusOptions {
  /**
   * How long the group coordinator waits for a consumer's heartbeat before it declares the member dead and
   * hands its partitions (from the last committed offset) to the rest of the group. kafkajs default: 30000.
   * The broker only accepts values within group.min/max.session.timeout.ms (default 6000..1800000).
   */
  sessionTimeoutMs?: number;
  /** Heartbeat period; must be well below sessionTimeoutMs (a third or less). kafkajs default: 3000. */
  heartbeatIntervalMs?: number;
}

/** Kafka through kafkajs: idempotent producer (acks=all), consumer groups committing after each handled message. */
export class KafkaBus implements Bus {
  readonly durable: boolean = true;
  private readonly kafka: Kafka;
  /** The producer's and admin's connections (each consumer member has its own: `memberClient`). */
  private readonly sockets = new OwnedSockets();
  private readonly config: KafkaConfig;
  // Connections are made once, on first use; callers arriving meanwhile wait for the same connection (two
  // concurrent first publishes used to connect two producers and keep only one, leaving the other open).
  private producer: Promise<Producer> | null = null;
  private admin: Promise<Admin> | null = null;
  private readonly knownTopics = new Set<string>();
  private readonly consumers = new Set<Consumer>();
  private readonly options: KafkaBusOptions;

  constructor(
    brokers: string[],
    private readonly clientId: string,
    options: KafkaBusOptions = {},
  ) {
    this.options = options;
    // Required here, not at import: embedded mode never pays for loading kafkajs.
    const { logLevel } = require('kafkajs') as typeof import('kafkajs');
    this.config = { clientId, brokers, logLevel: logLevel.ERROR, retry: { retries: 8 } };
    this.kafka = this.client(this.sockets);
  }

  private client(sockets: OwnedSockets): Kafka {
    const { Kafka } = require('kafkajs') as typeof import('kafkajs');
    return new Kafka({ ...this.config, socketFactory: sockets.factory });
  }

  /**
   * Commits a group's offsets while it has no member, as kafkajs's `admin.setOffsets` does (a member of the group,
   * paused, that seeks and leaves after its first fetch), but with a short fetch wait: kafkajs's admin waits its
   * default 5 s for that fetch, which made every `from: 'latest'` subscription, so every gateway start, 5 s longer each.
   */
  private async commitOffsets(
    groupId: string,
    ends: { topic: string; partitions: { partition: number; offset: string }[] }[],
  ): Promise<void> {
    const sockets = new OwnedSockets();
    const consumer = this.client(sockets).consumer({ groupId, maxWaitTimeInMs: 10 });
    const topics = ends.map((end) => end.topic);
    try {
      await consumer.connect();
      await consumer.subscribe({ topics, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        consumer.on(consumer.events.FETCH, () => resolve());
        consumer.run({ eachBatchAutoResolve: false, eachBatch: async () => {} }).catch(reject);
        consumer.pause(topics.map((topic) => ({ topic })));
        for (const { topic, partitions } of ends)
          for (const { partition, offset } of partitions) consumer.seek({ topic, partition, offset });
      });
      await consumer.stop();
    } finally {
      await consumer.disconnect().catch(() => undefined);
      sockets.end();
    }
  }

  private async ensureTopic(topic: string): Promise<void> {
    if (this.knownTopics.has(topic)) return;
    const admin = await this.connectedAdmin();
    for (let attempt = 1; ; attempt++) {
      try {
        const existing = await admin.listTopics();
        if (!existing.includes(topic)) await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
        break;
      } catch (error) {
        // A topic just made (here or by another process) that the broker does not serve yet: kafkajs's wait for its
        // leaders gives up on it on a busy broker, the topic being there a moment later. Asked again, a few times.
        if ((error as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION' || attempt >= TOPIC_READY_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(attempt, { baseMs: 100, maxMs: 2000 })));
      }
    }
    this.knownTopics.add(topic);
  }

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    await this.ensureTopic(topic);
    const producer = await this.connectedProducer();
    await producer.send({
      topic,
      acks: -1,
      messages: messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value), headers: m.headers })),
    });
  }

  async subscribe(
    topics: string | readonly string[],
    groupId: string,
    handler: MessageHandler,
    options: SubscribeOptions = {},
  ): Promise<Consumer> {
    const list = typeof topics === 'string' ? [topics] : [...topics];
    await Promise.all(list.map((topic) => this.ensureTopic(topic)));
    const { sessionTimeoutMs, heartbeatIntervalMs } = this.options;
    const { keys } = options;
    // Lag of the partitions this member holds (the group's assignment), so the members' values add up to the group's.
    let assigned: Record<string, number[]> = {};
    let stopped = false;
    let member: KafkaConsumer | null = null;
    // Each start of a member, one after the other; stop() waits for the one under way before it disconnects.
    let starting: Promise<void> = Promise.resolve();
    let failures = 0;
    let wake = () => {};

    const eachMessage = async ({ topic, message, partition }: EachMessagePayload) => {
      const key = message.key?.toString() ?? '';
      if (keys && !keys(key)) return;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) if (v !== undefined) headers[k] = v.toString();
      const received = {
        topic,
        key,
        value: JSON.parse(message.value?.toString() ?? '{}'),
        headers,
        offset: `${partition}:${message.offset}`,
      };
      await (keys
        ? inConsumerSpan(
            trace.getTracer('udp-bus'),
            ROOT_CONTEXT,
            received,
            {
              'messaging.system': 'kafka',
              'messaging.destination.partition.id': String(partition),
              'messaging.consumer.group.name': groupId,
            },
            handler,
          )
        : handler(received));
    };

    // Each member's connections, ended once it is replaced or stopped (see OwnedSockets).
    const retired: OwnedSockets[] = [];
    const start = async () => {
      if (stopped) return;
      const sockets = new OwnedSockets();
      retired.push(sockets);
      const client = this.client(sockets);
      // With a key filter, the consumer is made without the kafkajs instrumentation's wrappers: it made a span (and its
      // context) for every message, handed over or not, and timed every request to the broker for a meter provider
      // this system does not register. `inConsumerSpan` makes the span of each message handed over.
      const consumer = (keys ? unwrapped(client.consumer) : client.consumer).call(client, {
        groupId,
        // How long the broker holds a fetch when nothing is new (kafkajs default 5 s). A stop waits for the fetch under
        // way, so every process's stop waited 5 s per consumer; an idle consumer now asks once a second.
        maxWaitTimeInMs: 1000,
        retry: {
          // kafkajs's own back-off (doubling, with jitter by its default randomisation factor), not libs/retry: it
          // retries inside the client (reconnects, a failing handler's batch), where our code has no loop to pace.
          retries: Number.MAX_SAFE_INTEGER,
          initialRetryTime: 100,
          maxRetryTime: 2000,
          // Asked after a crash kafkajs would recover from, once the crashed member is disconnected. Its own restart
          // cannot be stopped: a disconnect() while it connects again leaves the new member running with its
          // connections open (a CI jest run held one for 8 minutes). So this bus starts the new member itself.
          // kafkajs has disconnected the crashed member when it asks; a socket it opens after that is ended here. Only
          // the bus's current member is replaced: a crashed member whose fetch went on crashes again later.
          restartOnFailure: async () => {
            sockets.end();
            if (!stopped && member === consumer) restart();
            return false;
          },
        },
        // Left out when unset so kafkajs keeps its own defaults.
        ...(sessionTimeoutMs !== undefined && { sessionTimeout: sessionTimeoutMs }),
        ...(heartbeatIntervalMs !== undefined && { heartbeatInterval: heartbeatIntervalMs }),
      });
      // Listened for before `run`, which joins the group before it resolves.
      consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
        assigned = Object.fromEntries(list.map((topic) => [topic, payload.memberAssignment[topic] ?? []]));
        failures = 0;
      });
      member = consumer;
      try {
        await consumer.connect();
        await consumer.subscribe({ topics: list, fromBeginning: true });
        // kafkajs commits a message's offset only after eachMessage resolves; a throw means redelivery. A durable group
        // commits after each message, so a new member redelivers as little as it can. A group of one process that
        // follows what happens while it runs (`latest`: a gateway's live sync, every change of every user) commits once a
        // second: reading a backlog of 10,000 messages, a commit per message cost the broker 380-690 µs and the consumer
        // 130-190 µs of CPU a message, against 8-13 and 5-8 µs (a script of the moment on this machine's Kafka; at the
        // distributed bench's 50-100 writes/s the broker's CPU is mostly fixed and showed no difference). A member
        // started again within the process then sees at most a second of notifications twice, which its handlers take as
        // they take any (a stream pulls what changed after its own cursor).
        const commits = options.from === 'latest' ? { autoCommitInterval: 1000 } : { autoCommitThreshold: 1 };
        await consumer.run({ autoCommit: true, ...commits, eachMessage });
      } catch (error) {
        await consumer.disconnect().catch(() => undefined);
        throw error;
      }
    };
    /** A new member after a pause (libs/retry, capped at 2 s as kafkajs's own restarts were), unless stopped meanwhile. */
    const restart = () => {
      const pauseMs = backoffDelayMs(++failures, { baseMs: 100, maxMs: 2000 });
      starting = starting.then(async () => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pauseMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        await start().catch(() => {
          if (!stopped) restart();
        });
      });
    };

    let unobserve = () => {};
    const handle: Consumer = {
      stop: async () => {
        stopped = true;
        unobserve();
        this.consumers.delete(handle);
        wake();
        // A member still connecting is let finish (it then stops itself: `restartOnFailure`), and then disconnected.
        await starting.catch(() => undefined);
        await member?.disconnect().catch(() => undefined);
        for (const sockets of retired) sockets.end();
      },
    };
    if (options.from === 'latest') {
      // The group's offsets set to the topic's ends before it joins: kafkajs would resolve `latest` only once the join
      // and its rebalance delay are over (seconds), and skip what was published meanwhile. A group that has committed
      // offsets already (a member started again) keeps them.
      // A topic the broker has just made (auto-created by this process's first metadata request, on a broker started a
      // moment before) has no leader yet for a while: kafkajs's admin answers "not the leader" / "does not host this
      // topic-partition" (retriable errors) without retrying them, or no offsets of the topic at all, and a gateway
      // exited on it at its start. Asked again, 40 times (about 15 s).
      for (let attempt = 1; ; attempt++) {
        try {
          const admin = await this.connectedAdmin();
          const committed = await admin.fetchOffsets({ groupId, topics: list });
          // No answer for a topic at all: its partitions are not known yet either.
          const unknown = list.find((topic) => !committed.some((c) => c.topic === topic));
          if (unknown) throw Object.assign(new Error(`no offsets of ${unknown} yet`), { retriable: true });
          const fresh = committed.filter((c) => c.partitions.every((p) => p.offset === '-1')).map((c) => c.topic);
          if (fresh.length > 0) {
            const ends = await Promise.all(
              fresh.map(async (topic) => ({
                topic,
                partitions: (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, offset: p.high })),
              })),
            );
            await this.commitOffsets(groupId, ends);
          }
          break;
        } catch (error) {
          if (!(error as { retriable?: boolean }).retriable || attempt >= 40) throw error;
          await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(attempt, { baseMs: 50, maxMs: 500 })));
        }
      }
    }
    // Known to close() from the start: a bus closed while this first member connects stops it too.
    this.consumers.add(handle);
    // The first member's failure to connect is the caller's.
    starting = start();
    try {
      await starting;
    } catch (error) {
      this.consumers.delete(handle);
      throw error;
    }
    if (stopped) return handle;
    unobserve = observeGauge(METRICS.kafkaConsumerLag, async (observe) => {
      await Promise.all(
        list.map(async (topic) => {
          const attributes = {
            'udp.service': this.clientId,
            'messaging.consumer.group.name': groupId,
            'messaging.destination.name': topic,
          };
          const partitions = assigned[topic] ?? [];
          if (partitions.length === 0) return observe(0, attributes);
          const admin = await this.connectedAdmin();
          const [ends, [committed]] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
          let lag = 0;
          for (const partition of partitions) {
            const end = ends.find((p) => p.partition === partition);
            const done = committed?.partitions.find((p) => p.partition === partition);
            if (!end) continue;
            // No commit yet: the group starts at the oldest retained message.
            const from = done && Number(done.offset) >= 0 ? Number(done.offset) : Number(end.low);
            lag += Math.max(0, Number(end.high) - from);
          }
          observe(lag, attributes);
        }),
      );
    });
    return handle;
  }

  async ping(): Promise<boolean> {
    try {
      await (await this.connectedAdmin()).describeCluster();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    for (const c of [...this.consumers]) await c.stop();
    // A connection that failed to open has nothing to close.
    await (await this.producer?.catch(() => null))?.disconnect();
    await (await this.admin?.catch(() => null))?.disconnect();
    this.sockets.end();
  }

  private connectedProducer(): Promise<Producer> {
    return (this.producer ??= connected(this.kafka.producer({ idempotent: true, maxInFlightRequests: 1 }), () => (this.producer = null)));
  }

  private connectedAdmin(): Promise<Admin> {
    return (this.admin ??= connected(this.kafka.admin(), () => (this.admin = null)));
  }
}

/**
 * The connections one kafkajs client opens, so they can be ended for good. kafkajs opens connections lazily, on any
 * request: a consumer whose fetch was still handling a batch when it crashed sent a heartbeat after its disconnect,
 * which opened a new connection nobody would close (CI: a jest run held two for good after a broker restart). Once
 * `end` is called, every connection still open is ended with an error (kafkajs then fails what it was sending) and
 * every new one is refused.
 */
class OwnedSockets {
  private readonly open = new Set<Socket>();
  private ended = false;

  readonly factory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
    if (this.ended) throw new Error('this Kafka client was closed');
    if (ssl) throw new Error('TLS to Kafka is not configured by this bus');
    const socket = connectSocket({ host, port }, onConnect);
    // As kafkajs's own factory does: a connection to a broker that vanished is noticed.
    socket.setKeepAlive(true, 60_000);
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
    return socket;
  };

  end(): void {
    this.ended = true;
    for (const socket of this.open) {
      // Closed by kafkajs already (its disconnect ends the socket and does not wait for the other side): let go quietly.
      // Any other is still in use by a client that was told to stop: the error fails what it was sending.
      if (socket.writableEnded) socket.destroy();
      else socket.destroy(new Error('this Kafka client was closed'));
    }
    this.open.clear();
  }
}

/** Connects `client`; a failed connection is forgotten (`forget`), so the next use tries again. */
function connected<T extends { connect(): Promise<void> }>(client: T, forget: () => void): Promise<T> {
  return client.connect().then(
    () => client,
    (error: unknown) => {
      forget();
      throw error;
    },
  );
}

/** The function a shimmer wrapper (OpenTelemetry's instrumentations) stands for, or `fn` itself when unwrapped. */
function unwrapped<F extends (...args: never[]) => unknown>(fn: F): F {
  return (fn as F & { __original?: F }).__original ?? fn;
}
