-- Run on FerretDB's PostgreSQL database (tools/servers/with-servers.sh) before FerretDB starts.
--
-- FerretDB 1.x hands PostgreSQL an equality on a field as `_jsonb->$1 @> $2`, the field's name a parameter of a
-- cached statement. The B-tree indexes it makes for a collection's indexes (`_jsonb->'field'`) cannot serve that:
-- every find, update and delete by `_id` or an indexed field read the whole table (8-17 ms at 20,000 documents, and
-- growing with the collection), where MongoDB looks the document up in its index. Two settings make those lookups
-- indexed, as they are in production:
-- - plan_cache_mode = force_custom_plan (on the server's command line): each execution is planned with its values,
--   so the predicate reads `(_jsonb -> '_id') @> '"x"'`;
-- - a GIN index on `(_jsonb -> 'field')` beside each field FerretDB indexes (made by the trigger below, as FerretDB
--   creates its indexes), which serves `@>`.
-- Nothing of FerretDB or of our code changes: its answers are the same, only found without a scan.

CREATE FUNCTION udp_lookup_indexes() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE
  made record;
  field text;
BEGIN
  FOR made IN
    SELECT cmd.objid AS index_oid, cmd.schema_name, tbl.relname AS table_name, am.amname
    FROM pg_event_trigger_ddl_commands() AS cmd
    JOIN pg_index AS ix ON ix.indexrelid = cmd.objid
    JOIN pg_class AS tbl ON tbl.oid = ix.indrelid
    JOIN pg_class AS idx ON idx.oid = cmd.objid
    JOIN pg_am AS am ON am.oid = idx.relam
    WHERE cmd.command_tag = 'CREATE INDEX'
  LOOP
    -- Our own indexes (GIN) are left alone, so this does not run again for them.
    CONTINUE WHEN made.amname <> 'btree';
    FOR field IN
      SELECT DISTINCT m[1] FROM regexp_matches(pg_get_indexdef(made.index_oid), '_jsonb -> ''([^'']+)''::text', 'g') AS m
    LOOP
      EXECUTE format(
        'CREATE INDEX IF NOT EXISTS %I ON %I.%I USING gin ((_jsonb -> %L))',
        'udp_' || md5(made.schema_name || '.' || made.table_name || '.' || field),
        made.schema_name,
        made.table_name,
        field
      );
    END LOOP;
  END LOOP;
END
$$;

CREATE EVENT TRIGGER udp_lookup_indexes ON ddl_command_end WHEN TAG IN ('CREATE INDEX') EXECUTE FUNCTION udp_lookup_indexes();
