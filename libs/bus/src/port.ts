/** The message-bus port: topics with keyed messages, consumer groups, at-least-once delivery. */

export interface BusMessage {
  /** Messages with the same key are delivered in publication order. */
  key: string;
  value: Record<string, unknown>;
  headers?: Record<string, string>;
}

export interface ReceivedMessage extends BusMessage {
  topic: string;
  offset: string;
}

/** A handler that throws gets the same message again later (nothing is committed past it). */
export type MessageHandler = (message: ReceivedMessage) => Promise<void>;

export interface Consumer {
  stop(): Promise<void>;
}

export interface SubscribeOptions {
  /**
   * Where a new group starts: `oldest` (the default) at the oldest retained message; `latest` at the next one published
   * (a group of one process that follows only what happens while it runs, such as a gateway's live sync).
   */
  from?: 'oldest' | 'latest';
  /**
   * Which messages the handler is given, by their key alone. A message whose key it refuses is passed over as handled:
   * its value is not parsed and no span is made for it (a gateway follows every user's changes and acts on those of the
   * few users with a live-sync stream open on it).
   */
  keys?: (key: string) => boolean;
}

export interface Bus {
  /**
   * Whether what it carries outlives the process: Kafka keeps every message for the groups that subscribe later; the
   * embedded bus starts empty at each start, and its consumers follow only what is published while they run.
   */
  readonly durable: boolean;
  publish(topic: string, messages: BusMessage[]): Promise<void>;
  /**
   * Each message reaches one consumer of each group; a new group starts at the oldest retained message. Several topics
   * may share one consumer (one group, one set of connections and fetches): each message names its topic.
   */
  subscribe(topics: string | readonly string[], groupId: string, handler: MessageHandler, options?: SubscribeOptions): Promise<Consumer>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
