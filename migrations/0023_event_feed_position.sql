-- An event's feed position (events.txid) is taken when the event is written, after the locks of the
-- change it records: the latest transaction id handed out so far (never below the writing transaction's
-- own). The id of the writing transaction alone is handed out at its first write or row lock, which may come
-- before it waits for a record another transaction changes and commits first; ordered by that id, the later
-- change of a record could appear before the earlier one. A position at or above the transaction's own id
-- keeps the feed gap-free: while the transaction runs, the horizon stays at or below its id.
-- PL/pgSQL, never inlined: its expression runs with a snapshot of its own, taken when the row is written.
CREATE OR REPLACE FUNCTION event_feed_position() RETURNS xid8 LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN greatest(pg_current_xact_id(), (pg_snapshot_xmax(pg_current_snapshot())::text::numeric - 1)::text::xid8);
END
$$;
--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "txid" SET DEFAULT event_feed_position();
