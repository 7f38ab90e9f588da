/**
 * The event store file's tables, shared by the readers' connection (sqlite.ts, which creates and upgrades them) and the
 * writer (sqlite-writer.ts, which requires this file by path: erasable TypeScript only, as sqlite-pragmas.ts).
 *
 * The events' indexes hold a hash of the stream id (`stream_key`), never the id: interior index pages keep copies of
 * keys as dividers, and a page rebuilt by SQLite keeps old keys in its free space, out of reach of secure_delete. A
 * stream id is a user's id with a prefix; keyed by its hash, erasing a stream leaves none of it in an events index,
 * and needs no rebuild of those indexes (the rebuild cost the writer's lock 1.9 s at 1,000,000 events). Only the
 * streams table's primary key (one row per stream, for listing by prefix) keeps ids, and is rebuilt on erasure.
 */

import { createHash } from 'node:crypto';

/** 63 bits of the stream id's SHA-1: a collision costs only selectivity, every query also tests the id itself. */
export function streamKey(streamId: string): bigint {
  return createHash('sha1').update(streamId).digest().readBigInt64LE(0) >> 1n;
}

export const EVENTS_TABLE = `
  CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    stream_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    metadata TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    stream_key INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS events_by_stream ON events (stream_key, revision);
  CREATE TABLE IF NOT EXISTS streams (stream_id TEXT PRIMARY KEY, revision INTEGER NOT NULL);
`;

/** The streams table's primary key: the one index with stream ids, rebuilt when a stream is deleted. */
export const STREAMS_ID_INDEX = 'sqlite_autoindex_streams_1';
