import type { Bus } from '@udp/bus';
import { preferenceEvents } from '@udp/contracts';
import { integrationPublisher } from '@udp/eventsourcing';
import { type PreferenceEvent, type PreferenceId, preferenceStreams } from '../domain/aggregate';

export const PREFERENCES_TOPIC = preferenceEvents.PREFERENCES_CHANGES_TOPIC;

/**
 * Every preference change on the bus (key: user id). No key and no document, only the event's store position: the
 * order of the user's changes across keys, by which live sync pulls them (`/internal/preference/changes`).
 */
export const preferenceChangesPublisher = (bus: Bus) =>
  integrationPublisher<PreferenceEvent, preferenceEvents.PreferencesChangedMessage, PreferenceId>(bus, {
    name: 'preference-changes-publisher',
    topic: PREFERENCES_TOPIC,
    aggregate: preferenceStreams,
    userOf: ({ userId }) => userId,
    details: (_event, { position }) => ({ position: position.toString() }),
  });
