import type { Bus } from '@udp/bus';
import type { historyEvents } from '@udp/contracts';
import { integrationPublisher } from '@udp/eventsourcing';
import { HISTORY_STREAM_PREFIX, userIdOfHistoryStream } from '../domain/events';

export const HISTORY_TOPIC = 'user-data.history.v1';

/** Every history change on the bus (key: user id; no item data, no personal data). */
export const historyChangesPublisher = (bus: Bus) =>
  integrationPublisher(bus, {
    name: 'history-changes-publisher',
    topic: HISTORY_TOPIC,
    streamPrefix: HISTORY_STREAM_PREFIX,
    userIdOf: userIdOfHistoryStream,
    message: (event, userId): historyEvents.HistoryChangedMessage => ({
      userId,
      type: event.type as historyEvents.HistoryChangedMessage['type'],
      revision: event.revision,
      occurredAt: event.createdAt,
    }),
  });
