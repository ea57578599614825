CREATE TABLE "visit_assignees" (
	"company_id" uuid NOT NULL,
	"visit_uuid" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"starts_at" timestamp (3) with time zone NOT NULL,
	"ends_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "visit_assignees_company_id_visit_uuid_user_id_pk" PRIMARY KEY("company_id","visit_uuid","user_id")
);
--> statement-breakpoint
ALTER TABLE "visit_assignees" ADD CONSTRAINT "visit_assignees_company_id_visit_uuid_visits_company_id_uuid_fk" FOREIGN KEY ("company_id","visit_uuid") REFERENCES "public"."visits"("company_id","uuid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "visit_assignees_window_idx" ON "visit_assignees" USING btree ("company_id","user_id","starts_at","visit_uuid","ends_at");--> statement-breakpoint
CREATE INDEX "schedule_holds_visit_window_idx" ON "schedule_holds" USING btree ("company_id","user_id","starts_at","ends_at") WHERE "schedule_holds"."visit_uuid" is not null;--> statement-breakpoint
CREATE INDEX "schedule_holds_time_off_window_idx" ON "schedule_holds" USING btree ("company_id","user_id","ends_at","starts_at") WHERE "schedule_holds"."time_off_uuid" is not null;
--> statement-breakpoint
-- visit_assignees follows visits: one row per assigned user of each live visit, rewritten when the users, the
-- times or deleted_at change. The trigger is its only writer, so no write path of a visit can forget it.
CREATE OR REPLACE FUNCTION sync_visit_assignees() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.assigned_user_ids = OLD.assigned_user_ids AND NEW.starts_at = OLD.starts_at AND NEW.ends_at = OLD.ends_at
      AND (NEW.deleted_at IS NULL) = (OLD.deleted_at IS NULL) THEN
      RETURN NULL;
    END IF;
    DELETE FROM visit_assignees WHERE company_id = OLD.company_id AND visit_uuid = OLD.uuid;
  END IF;
  IF NEW.deleted_at IS NULL THEN
    INSERT INTO visit_assignees (company_id, visit_uuid, user_id, starts_at, ends_at)
    SELECT DISTINCT NEW.company_id, NEW.uuid, assignee.user_id, NEW.starts_at, NEW.ends_at
    FROM unnest(NEW.assigned_user_ids) AS assignee(user_id);
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER visit_assignees_sync AFTER INSERT OR UPDATE OF assigned_user_ids, starts_at, ends_at, deleted_at ON visits
  FOR EACH ROW EXECUTE FUNCTION sync_visit_assignees();
--> statement-breakpoint
INSERT INTO visit_assignees (company_id, visit_uuid, user_id, starts_at, ends_at)
SELECT DISTINCT visit.company_id, visit.uuid, assignee.user_id, visit.starts_at, visit.ends_at
FROM visits visit, unnest(visit.assigned_user_ids) AS assignee(user_id)
WHERE visit.deleted_at IS NULL;
