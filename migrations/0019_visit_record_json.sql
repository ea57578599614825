ALTER TABLE "visit_assignees" ADD COLUMN "record_json" text;--> statement-breakpoint
ALTER TABLE "visits" ADD COLUMN "record_json" text;
--> statement-breakpoint
-- A visit's GET form as JSON text: the same text JSON.stringify(toVisitResponse(...)) gives (row_to_json writes
-- compact JSON in column order; timestamps as toISOString writes them; the local fields from PostgreSQL's zone
-- rules, the same IANA data as Intl's for every date since 1980). test/visit-json.test.ts holds the two to the
-- same text. Its query is planned once per connection: left to choose, the planner would plan it afresh for
-- every call (it prices the users' array better per call), which costs more than running it.
CREATE OR REPLACE FUNCTION visit_record_json(visit visits) RETURNS text LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  made text;
BEGIN
  SELECT row_to_json(item)::text INTO made FROM (SELECT
    visit.uuid AS uuid, visit.job_uuid AS job_uuid, job.customer_uuid AS customer_uuid, job.location_uuid AS location_uuid,
    visit.title AS title, visit.instructions AS instructions, visit.time_zone AS time_zone,
    to_char(visit.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS starts_at,
    to_char(visit.ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ends_at,
    to_char(visit.starts_at AT TIME ZONE visit.time_zone, 'YYYY-MM-DD') AS local_date,
    to_char(visit.starts_at AT TIME ZONE visit.time_zone, 'HH24:MI') AS local_start_time,
    to_char(visit.ends_at AT TIME ZONE visit.time_zone, 'HH24:MI') AS local_end_time,
    visit.arrival_window_minutes AS arrival_window_minutes, visit.assigned_user_ids AS assigned_user_ids,
    visit.allow_overlap AS allow_overlap, visit.status AS status,
    to_char(visit.dispatched_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS dispatched_at,
    to_char(visit.en_route_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS en_route_at,
    to_char(visit.arrived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS arrived_at,
    to_char(visit.completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS completed_at,
    to_char(visit.cancelled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS cancelled_at,
    to_char(visit.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
    to_char(visit.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at,
    to_char(visit.deleted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS deleted_at,
    (SELECT row_to_json(embed) FROM (SELECT job.uuid, job.title, job.status) embed) AS job,
    (SELECT coalesce('[' || string_agg(person.json, ',' ORDER BY assignee.position) || ']', '[]')::json
      FROM unnest(visit.assigned_user_ids) WITH ORDINALITY AS assignee(user_id, position)
      -- LIMIT 1 keeps this a key lookup per user rather than a hash of the company's users.
      CROSS JOIN LATERAL (SELECT row_to_json(named)::text AS json FROM (
        SELECT u.id, u.first_name, u.last_name FROM users u WHERE u.company_id = visit.company_id AND u.id = assignee.user_id LIMIT 1
      ) named) person
    ) AS assigned_users
  FROM jobs job WHERE job.company_id = visit.company_id AND job.uuid = visit.job_uuid) item;
  RETURN made;
END;
$$;
--> statement-breakpoint
-- record_json keeps that text with the row. A one-statement booking inserts the text its answer is (the
-- mapper's); every other insert and every update, whatever the path, has this trigger write it. Rows written
-- before this migration keep null until their next write, and the reads that send the text make it for them
-- (coalesce): the migration does not rewrite the table.
CREATE OR REPLACE FUNCTION write_visit_record_json() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' OR NEW.record_json IS NULL THEN
    NEW.record_json := visit_record_json(NEW);
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER visits_record_json BEFORE INSERT OR UPDATE ON visits FOR EACH ROW EXECUTE FUNCTION write_visit_record_json();
--> statement-breakpoint
-- What a visit embeds changes with its job (uuid, title, status; customer_uuid and location_uuid are the job's)
-- and its users (names): the live visits concerned are rewritten, which has the trigger above write them again.
CREATE OR REPLACE FUNCTION refresh_visit_record_json() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'jobs' THEN
    UPDATE visits SET record_json = NULL
    WHERE company_id = NEW.company_id AND job_uuid = NEW.uuid AND deleted_at IS NULL;
  ELSE
    UPDATE visits SET record_json = NULL
    WHERE company_id = NEW.company_id AND assigned_user_ids @> ARRAY[NEW.id] AND deleted_at IS NULL;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER jobs_visit_record_json AFTER UPDATE OF title, status, customer_uuid, location_uuid ON jobs FOR EACH ROW
  WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.status IS DISTINCT FROM NEW.status
    OR OLD.customer_uuid IS DISTINCT FROM NEW.customer_uuid OR OLD.location_uuid IS DISTINCT FROM NEW.location_uuid)
  EXECUTE FUNCTION refresh_visit_record_json();
--> statement-breakpoint
CREATE TRIGGER users_visit_record_json AFTER UPDATE OF first_name, last_name ON users FOR EACH ROW
  WHEN (OLD.first_name IS DISTINCT FROM NEW.first_name OR OLD.last_name IS DISTINCT FROM NEW.last_name)
  EXECUTE FUNCTION refresh_visit_record_json();
--> statement-breakpoint
-- visit_assignees carries the text too (migration 0018's trigger, now also on a change of the text alone), so a
-- technician's window is read from its own rows, without a lookup in visits.
CREATE OR REPLACE FUNCTION sync_visit_assignees() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.assigned_user_ids = OLD.assigned_user_ids AND NEW.starts_at = OLD.starts_at AND NEW.ends_at = OLD.ends_at
      AND (NEW.deleted_at IS NULL) = (OLD.deleted_at IS NULL) THEN
      IF NEW.deleted_at IS NULL AND NEW.record_json IS DISTINCT FROM OLD.record_json THEN
        UPDATE visit_assignees SET record_json = NEW.record_json WHERE company_id = NEW.company_id AND visit_uuid = NEW.uuid;
      END IF;
      RETURN NULL;
    END IF;
    DELETE FROM visit_assignees WHERE company_id = OLD.company_id AND visit_uuid = OLD.uuid;
  END IF;
  IF NEW.deleted_at IS NULL THEN
    INSERT INTO visit_assignees (company_id, visit_uuid, user_id, starts_at, ends_at, record_json)
    SELECT DISTINCT NEW.company_id, NEW.uuid, assignee.user_id, NEW.starts_at, NEW.ends_at, NEW.record_json
    FROM unnest(NEW.assigned_user_ids) AS assignee(user_id);
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
DROP TRIGGER visit_assignees_sync ON visits;
--> statement-breakpoint
CREATE TRIGGER visit_assignees_sync AFTER INSERT OR UPDATE ON visits FOR EACH ROW EXECUTE FUNCTION sync_visit_assignees();
