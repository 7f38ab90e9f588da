import type { Bus } from '@udp/bus';
import { historyEvents } from '@udp/contracts';
import { integrationPublisher } from '@udp/eventsourcing';
import { type HistoryEvent, historyStreams } from '../domain/aggregate';

export const HISTORY_TOPIC = historyEvents.HISTORY_CHANGES_TOPIC;

/** Every history change on the bus (key: user id; no item data, no personal data). */
export const historyChangesPublisher = (bus: Bus) =>
  integrationPublisher<HistoryEvent, historyEvents.HistoryChangedMessage>(bus, {
    name: 'history-changes-publisher',
    topic: HISTORY_TOPIC,
    aggregate: historyStreams,
  });
