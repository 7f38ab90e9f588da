import { randomUUID } from 'node:crypto';
import { type EventStore, WrongExpectedRevisionError } from '@udp/eventstore';
import type { Logger } from '@udp/telemetry';
import { LEGACY_PREFERENCE_STREAM_PREFIX, legacyOwnerOf, preferenceStreamId } from '../domain/events';

export interface LegacyMigrationReport {
  /** Former streams found. */
  streams: number;
  /** New streams written (one per user and key found in them). */
  written: number;
  /** Former streams left in place because one of their events could not be attributed (logged). */
  kept: number;
}

/**
 * Rewrites the former, ambiguous preference streams (`preference-<user>-<base64url(key)>`) into the new ones
 * (`preference.v2-<user>/<key>`), then deletes them. Runs at start, before the projector and the routes.
 *
 * Every event names its key, and a former name plus a key give exactly one user, so each event goes to the
 * stream of the user who wrote it, even from a stream two users shared; its owner is recorded in its metadata.
 * Safe to repeat and to run in two instances at once: a new stream is written in one append that expects it
 * not to exist (when it does, the copy was made before), and the former stream is deleted only after every one
 * of its events is in a new stream. Stop every instance of the previous version before starting this one: it
 * would still write the former names.
 */
export async function migrateLegacyPreferenceStreams(store: EventStore, logger: Logger): Promise<LegacyMigrationReport> {
  const streamIds = new Set<string>();
  const subscription = store.subscribe({ streamPrefixes: [LEGACY_PREFERENCE_STREAM_PREFIX] }, async (event) => {
    streamIds.add(event.streamId);
  });
  try {
    await subscription.caughtUp();
  } finally {
    await subscription.stop();
  }

  const report: LegacyMigrationReport = { streams: 0, written: 0, kept: 0 };
  for (const legacyId of streamIds) {
    const { events } = await store.readStream(legacyId);
    if (events.length === 0) continue; // deleted by an earlier run
    report.streams++;
    const byOwner = new Map<string, { userId: string; key: string; events: typeof events }>();
    let attributable = true;
    for (const event of events) {
      const key = typeof event.data.key === 'string' ? event.data.key : undefined;
      const userId = key === undefined ? null : legacyOwnerOf(legacyId, key);
      if (userId === null || key === undefined) {
        attributable = false;
        logger.error(
          { streamId: legacyId, revision: event.revision },
          'preference migration: event names no key of this stream; stream kept',
        );
        continue;
      }
      const target = preferenceStreamId(userId, key);
      const group = byOwner.get(target) ?? { userId, key, events: [] };
      group.events.push(event);
      byOwner.set(target, group);
    }
    for (const [target, { userId, key, events: owned }] of byOwner) {
      try {
        await store.appendToStream(
          target,
          owned.map((e) => ({
            id: randomUUID(),
            type: e.type,
            data: e.data,
            metadata: {
              ...e.metadata,
              owner: { userId, key },
              migratedFrom: { streamId: legacyId, revision: e.revision, eventId: e.id, createdAt: e.createdAt },
            },
          })),
          { expectedRevision: 'no_stream' },
        );
        report.written++;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
      }
    }
    if (attributable) await store.deleteStream(legacyId);
    else report.kept++;
  }
  if (report.streams > 0) logger.info({ ...report }, 'preference streams migrated to unambiguous names');
  return report;
}
