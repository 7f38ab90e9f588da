import * as erasure from './events/erasure';
import * as exports from './events/export';
import * as history from './events/history';
import * as playlists from './events/playlists';
import * as preferences from './events/preference';
import * as profile from './events/profile';
import { z } from './zod';

/**
 * The AsyncAPI 3 document of every topic the system publishes or consumes (served by the gateway at
 * `/asyncapi.json`), generated from the same zod schemas that type and validate the messages. A topic is
 * added here with one entry; `asyncapi.unit.spec.ts` validates the result with the AsyncAPI parser.
 */
interface TopicEntry {
  /** Channel id in the document. */
  id: string;
  address: string;
  description: string;
  message: { name: string; summary: string; schema: z.ZodType };
  /** Which apps publish to it and which consume it (each becomes an operation). */
  sentBy: string[];
  receivedBy: string[];
}

const PARTICIPANTS = ['history-svc', 'playlist-svc', 'preference-svc', 'profile-svc', 'export-worker'];

export const ASYNCAPI_TOPICS: TopicEntry[] = [
  {
    id: 'historyChanges',
    address: history.HISTORY_CHANGES_TOPIC,
    description:
      "Every change of a user's history (one message per stored event), for the data-management team. No item data. Every gateway replica follows it with a group of its own for live sync (`GET /api/changes`, docs/live-sync.md): a message tells it whose streams pull the change from history-svc.",
    message: { name: 'HistoryChanged', summary: 'A history changed', schema: history.HistoryChangedMessage },
    sentBy: ['history-svc'],
    receivedBy: ['gateway'],
  },
  {
    id: 'playlistChanges',
    address: playlists.PLAYLISTS_CHANGES_TOPIC,
    description:
      "Every change of a user's playlists (one message per stored event), for the data-management team. Playlist ids only: no item ids, no names. Every gateway replica follows it with a group of its own for live sync (`GET /api/changes`).",
    message: { name: 'PlaylistsChanged', summary: 'A playlist changed', schema: playlists.PlaylistsChangedMessage },
    sentBy: ['playlist-svc'],
    receivedBy: ['gateway'],
  },
  {
    id: 'preferenceChanges',
    address: preferences.PREFERENCES_CHANGES_TOPIC,
    description:
      "Every change of a user's preferences (one message per stored event): the event's type, the key's stream revision and the event's store position (the order of the user's preference changes). No key, no document. Every gateway replica follows it with a group of its own for live sync (`GET /api/changes`).",
    message: { name: 'PreferencesChanged', summary: 'A preference changed', schema: preferences.PreferencesChangedMessage },
    sentBy: ['preference-svc'],
    receivedBy: ['gateway'],
  },
  {
    id: 'profileChanges',
    address: profile.PROFILE_CHANGES_TOPIC,
    description:
      "Every change of a user's profile (one message per stored event). No field of the profile. Every gateway replica follows it with a group of its own for live sync (`GET /api/changes`).",
    message: { name: 'ProfileChanged', summary: 'A profile changed', schema: profile.ProfileChangedMessage },
    sentBy: ['profile-svc'],
    receivedBy: ['gateway'],
  },
  {
    id: 'exportRequested',
    address: exports.EXPORT_TOPICS.requested,
    description:
      'A user asked for an export of their data (`POST /api/data/export`); one export-worker instance of the consumer group builds the zip.',
    message: { name: 'ExportRequested', summary: 'An export was requested', schema: exports.ExportRequestedMessage },
    sentBy: ['export-worker'],
    receivedBy: ['export-worker'],
  },
  {
    id: 'exportCompleted',
    address: exports.EXPORT_TOPICS.completed,
    description: 'An export is ready for download until `expiresAt`.',
    message: { name: 'ExportCompleted', summary: 'An export is ready', schema: exports.ExportCompletedMessage },
    sentBy: ['export-worker'],
    receivedBy: [],
  },
  {
    id: 'exportFailed',
    address: exports.EXPORT_TOPICS.failed,
    description: 'An export could not be built.',
    message: { name: 'ExportFailed', summary: 'An export failed', schema: exports.ExportFailedMessage },
    sentBy: ['export-worker'],
    receivedBy: [],
  },
  {
    id: 'erasureRequested',
    address: erasure.ERASURE_TOPICS.requested,
    description:
      "A user asked for the erasure of all their data (`DELETE /api/data`). Every participant deletes the user's streams, read models and checkpoint entries, then confirms. Every gateway replica ends the user's live-sync streams (an `erasure` event).",
    message: { name: 'ErasureRequested', summary: 'An erasure was requested', schema: erasure.ErasureRequestedMessage },
    sentBy: ['export-worker'],
    receivedBy: [...PARTICIPANTS, 'gateway'],
  },
  {
    id: 'erasureConfirmed',
    address: erasure.ERASURE_TOPICS.confirmed,
    description: "One participant erased the user's data it held (a redelivered request is confirmed again).",
    message: { name: 'ErasureConfirmed', summary: "A participant erased a user's data", schema: erasure.ErasureConfirmedMessage },
    sentBy: PARTICIPANTS,
    receivedBy: ['export-worker'],
  },
  {
    id: 'erasureCompleted',
    address: erasure.ERASURE_TOPICS.completed,
    description: 'Every participant confirmed: nothing of the user remains readable. For the data-management team.',
    message: { name: 'ErasureCompleted', summary: "A user's data is erased everywhere", schema: erasure.ErasureCompletedMessage },
    sentBy: ['export-worker'],
    receivedBy: [],
  },
];

/** `history-svc` -> `HistorySvc`, for operation ids. */
const pascal = (name: string) =>
  name
    .split(/[^a-zA-Z0-9]+/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

/** The JSON Schema of a message (AsyncAPI's default schema format is a superset of draft 7). */
function payloadSchema(schema: z.ZodType): Record<string, unknown> {
  // `input`: what a consumer may receive; fields added later (compatibly) are not refused.
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return json;
}

export function buildAsyncApiDocument(): Record<string, unknown> {
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const topic of ASYNCAPI_TOPICS) {
    const { name, summary, schema } = topic.message;
    schemas[`${name}Payload`] = payloadSchema(schema);
    messages[name] = {
      name,
      title: name,
      summary,
      contentType: 'application/json',
      payload: { $ref: `#/components/schemas/${name}Payload` },
      bindings: {
        kafka: {
          key: { type: 'string', description: 'The user id (opaque; messages with the same key keep their order).' },
          bindingVersion: '0.5.0',
        },
      },
    };
    channels[topic.id] = {
      address: topic.address,
      description: topic.description,
      messages: { [name]: { $ref: `#/components/messages/${name}` } },
    };
    const operation = (action: 'send' | 'receive', app: string) => ({
      action,
      channel: { $ref: `#/channels/${topic.id}` },
      summary: `${app} ${action === 'send' ? 'publishes' : 'consumes'} ${topic.address}`,
      messages: [{ $ref: `#/channels/${topic.id}/messages/${name}` }],
    });
    for (const app of topic.sentBy) operations[`${pascal(app)}Sends${pascal(topic.id)}`] = operation('send', app);
    for (const app of topic.receivedBy) operations[`${pascal(app)}Receives${pascal(topic.id)}`] = operation('receive', app);
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'User-data platform events',
      version: '1.0.0',
      description:
        'Topics of the user-data platform on Kafka (`KAFKA_BROKERS`; in embedded mode the same messages go over the in-process bus). ' +
        'Every message is JSON, keyed by the user id, and carries opaque ids only, never personal data.',
    },
    defaultContentType: 'application/json',
    servers: {
      kafka: {
        host: 'kafka:9092',
        protocol: 'kafka',
        description: 'The brokers named by KAFKA_BROKERS (this host is the docker compose one).',
      },
    },
    channels,
    operations,
    components: { messages, schemas },
  };
}
