import type { Bus } from '@udp/bus';
import { exportEvents } from '@udp/contracts';
import { type Projection, aggregateProjection } from '@udp/eventsourcing';
import { exportStreams } from '../domain/aggregate';
import type { ExportAddresses } from './exports';

const { EXPORT_TOPICS } = exportEvents;

/**
 * The export stream's outbox: `requested`, `completed` and `failed` messages published from the recorded
 * events (at least once, in order per user, with the event id as `event-id` header for de-duplication).
 * An event is in the store exactly once, so a redelivered request that changes nothing publishes nothing.
 */
export function exportMessagesPublisher(bus: Bus, addresses: ExportAddresses): Projection {
  return aggregateProjection({
    name: 'export-messages-publisher',
    aggregate: exportStreams,
    async apply(event, { id: userId, eventId }) {
      const headers = { 'event-id': eventId };
      switch (event.type) {
        case 'ExportRequested': {
          const { key, fileName, callbackUrl, requestedAt } = event.data;
          const value: exportEvents.ExportRequestedMessage = {
            key,
            userId,
            fileName,
            ...(callbackUrl !== undefined && { callbackUrl }),
            requestedAt,
          };
          return bus.publish(EXPORT_TOPICS.requested, [{ key: userId, value, headers }]);
        }
        case 'ExportCompleted': {
          const { key, size, sha256, expiresAt, completedAt } = event.data;
          const value: exportEvents.ExportCompletedMessage = {
            key,
            userId,
            size,
            sha256,
            url: addresses.url(key),
            publicUrl: addresses.publicUrl(key),
            expiresAt,
            completedAt,
          };
          return bus.publish(EXPORT_TOPICS.completed, [{ key: userId, value, headers }]);
        }
        case 'ExportFailed': {
          const value: exportEvents.ExportFailedMessage = {
            key: event.data.key,
            userId,
            reason: event.data.reason,
            failedAt: event.data.failedAt,
          };
          return bus.publish(EXPORT_TOPICS.failed, [{ key: userId, value, headers }]);
        }
      }
    },
  });
}
