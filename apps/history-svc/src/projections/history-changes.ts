import type { Bus } from '@udp/bus';
import type { historyEvents } from '@udp/contracts';
import type { Projection } from '@udp/eventsourcing';
import { HISTORY_STREAM_PREFIX, userIdOfHistoryStream } from '../domain/events';

export const HISTORY_TOPIC = 'user-data.history.v1';

/**
 * Publishes an integration message per history event (key: user id; no item data, no personal data) for
 * the data-management consumers. Checkpointed like a read model: at-least-once, in order per user.
 */
export function historyChangesPublisher(bus: Bus): Projection {
  return {
    name: 'history-changes-publisher',
    streamPrefixes: [HISTORY_STREAM_PREFIX],
    async apply(event) {
      const userId = userIdOfHistoryStream(event.streamId);
      const message: historyEvents.HistoryChangedMessage = {
        userId,
        type: event.type as historyEvents.HistoryChangedMessage['type'],
        revision: event.revision,
        occurredAt: event.createdAt,
      };
      await bus.publish(HISTORY_TOPIC, [{ key: userId, value: message, headers: { 'event-id': event.id } }]);
    },
  };
}
