/**
 * The PostgreSQL event store's tables and its append function (postgres.ts), made at open under an advisory lock so
 * that replicas starting together do not race on `CREATE ... IF NOT EXISTS`.
 *
 * - `udp_events`: one row per event. `transaction_id` is the id of the transaction that stored it (xid8, 64 bits with
 *   its epoch, never wraps); `position` a sequence number taken in that transaction. The all-events feed reads in
 *   (transaction_id, position) order below the oldest transaction still open (postgres.ts, "The feed"), through
 *   `udp_events_feed`. `segment_hash` is the hash of the stream's user key (`segmentHash`), indexed per segment count by
 *   `udp_events_segment_<count>` (made when a subscription first asks for segments of that count), so a replica reads
 *   only its segments' events. Payloads are text (JSON as written): jsonb cannot hold `\u0000` in a string and would
 *   reorder keys.
 * - `udp_streams`: each existing stream's last revision (the append's check, and `listStreams` by a range of its
 *   primary key) and the id of its key. Stream ids in the "C" collation: byte order, which for UTF-8 is code-point order
 *   (prefix-range.ts).
 * - `udp_stream_keys`: each stream's AES-256-GCM key (postgres-keys.ts), deleted with the stream; `data` and `metadata`
 *   of its events are sealed with it. Apart from `udp_streams`, whose row changes at every append: each change leaves
 *   an old row version behind, and the key must have exactly one, which the erasure's scrub removes.
 */

/** Both advisory-lock keys of the store are in this class (the two-key form), apart from other users of the database. */
export const LOCK_CLASS = 1_430_043;
/** Held while the schema is made. */
export const SCHEMA_LOCK = 1;

export const NOTIFY_CHANNEL = 'udp_events';

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS udp_events (
  position bigserial NOT NULL,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_id text COLLATE "C" NOT NULL,
  revision bigint NOT NULL,
  event_id text NOT NULL,
  type text NOT NULL,
  data text NOT NULL,
  metadata text NOT NULL,
  created_at bigint NOT NULL,
  segment_hash bigint,
  CONSTRAINT udp_events_by_stream UNIQUE (stream_id, revision)
);
CREATE INDEX IF NOT EXISTS udp_events_feed ON udp_events (transaction_id, position);
CREATE TABLE IF NOT EXISTS udp_streams (
  stream_id text COLLATE "C" PRIMARY KEY,
  revision bigint NOT NULL
);
ALTER TABLE udp_streams ADD COLUMN IF NOT EXISTS key_id bigint;
CREATE TABLE IF NOT EXISTS udp_stream_keys (
  stream_id text COLLATE "C" PRIMARY KEY,
  key_id bigint NOT NULL,
  key bytea NOT NULL
);
-- The append of before keys: every append now names its stream's key.
DROP FUNCTION IF EXISTS udp_append(text[], bigint[], int[], bigint[], text[], text[], text[], text[], bigint);

-- Appends a batch (group commit): append i is p_streams[i] with p_counts[i] events, which are the next p_counts[i] of
-- the flat event arrays. Expected revision: -1 no_stream, -2 any, else the revision. p_key_ids[i]: the key append i's
-- events are sealed with; p_keys[i]: that key when the caller made it afresh (null otherwise), stored when the stream
-- has none. One row out per append:
--   stored    a retry of an append already stored (the same event ids where it put them): its last event's place
--   appended  its events stored now: the stream's revision after them, this transaction's id, their positions
--   conflict  the expected revision did not match: r_revision is the stream's
--   rekey     sealed with a key that is not the stream's (a cached key of a stream deleted since): nothing stored. A
--             key is never stored again once deleted: only one made afresh is, so a deleted key cannot come back.
CREATE OR REPLACE FUNCTION udp_append(
  p_streams text[], p_expected bigint[], p_counts int[], p_hashes bigint[],
  p_ids text[], p_types text[], p_data text[], p_metadata text[], p_created_at bigint,
  p_key_ids bigint[], p_keys bytea[]
) RETURNS TABLE (r_outcome text, r_revision bigint, r_transaction_id text, r_positions bigint[])
LANGUAGE plpgsql AS $fn$
DECLARE
  k int;
  i int;
  off int := 0;
  n int;
  cur bigint;
  expected bigint;
  first bigint;
  last_xid xid8;
  last_position bigint;
  appended boolean := false;
  stream_key bigint;
BEGIN
  -- Every stream of the batch is locked first, in one order (batches of several processes never deadlock), before this
  -- transaction writes anything: its id is given at its first write, so after each stream's previous writer has
  -- committed, and a stream's events are in the feed's order (transaction id) as in the stream's (revision). Advisory
  -- locks take no transaction id; the stream rows' own locks would (FOR UPDATE writes the row).
  FOR k IN SELECT DISTINCT hashtext(s) FROM unnest(p_streams) AS s ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(${LOCK_CLASS}, k);
  END LOOP;
  FOR i IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
    n := p_counts[i];
    expected := p_expected[i];
    cur := NULL;
    stream_key := NULL;
    SELECT s.revision, s.key_id INTO cur, stream_key FROM udp_streams AS s WHERE s.stream_id = p_streams[i];
    cur := coalesce(cur, -1);
    IF stream_key IS NULL THEN
      stream_key := (SELECT k.key_id FROM udp_stream_keys AS k WHERE k.stream_id = p_streams[i]);
      IF stream_key IS NULL AND p_keys[i] IS NOT NULL THEN
        INSERT INTO udp_stream_keys (stream_id, key_id, key) VALUES (p_streams[i], p_key_ids[i], p_keys[i]);
        stream_key := p_key_ids[i];
      END IF;
    END IF;
    IF stream_key IS DISTINCT FROM p_key_ids[i] THEN
      RETURN QUERY SELECT 'rekey'::text, cur, NULL::text, NULL::bigint[];
      off := off + n;
      CONTINUE;
    END IF;
    -- Where a retry of this append would have put its events: after the revision it expects (any: the last ones).
    first := CASE expected WHEN -1 THEN 0 WHEN -2 THEN cur - n + 1 ELSE expected + 1 END;
    IF n > 0 AND first >= 0 AND first + n - 1 <= cur AND (
      SELECT array_agg(e.event_id ORDER BY e.revision) FROM udp_events AS e
      WHERE e.stream_id = p_streams[i] AND e.revision BETWEEN first AND first + n - 1
    ) = p_ids[off + 1 : off + n] THEN
      SELECT e.transaction_id, e.position INTO last_xid, last_position FROM udp_events AS e
      WHERE e.stream_id = p_streams[i] AND e.revision = first + n - 1;
      RETURN QUERY SELECT 'stored'::text, cur, last_xid::text, ARRAY[last_position];
    ELSIF expected = -2 OR expected = cur THEN
      IF n > 0 THEN
        -- generate_series yields 1..n in order, so positions follow revisions within the append.
        RETURN QUERY WITH inserted AS (
          INSERT INTO udp_events (position, stream_id, revision, event_id, type, data, metadata, created_at, segment_hash)
          SELECT nextval('udp_events_position_seq'), p_streams[i], cur + g, p_ids[off + g], p_types[off + g],
            p_data[off + g], p_metadata[off + g], p_created_at, p_hashes[i]
          FROM generate_series(1, n) AS g
          RETURNING udp_events.position AS pos, udp_events.revision AS rev
        )
        SELECT 'appended'::text, cur + n, pg_current_xact_id()::text, array_agg(inserted.pos ORDER BY inserted.rev)
        FROM inserted;
        INSERT INTO udp_streams AS s (stream_id, revision, key_id) VALUES (p_streams[i], cur + n, stream_key)
        ON CONFLICT (stream_id) DO UPDATE SET revision = EXCLUDED.revision, key_id = EXCLUDED.key_id;
        appended := true;
      ELSE
        RETURN QUERY SELECT 'appended'::text, cur, NULL::text, ARRAY[]::bigint[];
      END IF;
    ELSE
      RETURN QUERY SELECT 'conflict'::text, cur, NULL::text, NULL::bigint[];
    END IF;
    off := off + n;
  END LOOP;
  -- Delivered to the listeners at commit (postgres.ts wakes its subscriptions on it).
  IF appended THEN
    PERFORM pg_notify('${NOTIFY_CHANNEL}', '');
  END IF;
END
$fn$;

-- The end of an erasure (postgres.ts deleteStream): under the stream's lock, what is left of its events, its row and
-- its key.
DROP FUNCTION IF EXISTS udp_delete_stream(text);
CREATE OR REPLACE FUNCTION udp_erase_stream(p_stream text) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(p_stream));
  DELETE FROM udp_events WHERE stream_id = p_stream;
  DELETE FROM udp_streams WHERE stream_id = p_stream;
  DELETE FROM udp_stream_keys WHERE stream_id = p_stream;
END
$fn$;
`;

/** The index of one segment count: its expression is the one `segmentCondition` filters on. */
export const segmentIndex = (count: number) =>
  `CREATE INDEX IF NOT EXISTS udp_events_segment_${count} ON udp_events ((segment_hash % ${count}), transaction_id, position)`;
