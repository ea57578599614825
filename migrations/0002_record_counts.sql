CREATE TABLE "record_counts" (
	"company_id" uuid NOT NULL,
	"table_name" text NOT NULL,
	"shard" integer NOT NULL,
	"live" bigint DEFAULT 0 NOT NULL,
	"deleted" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "record_counts_company_id_table_name_shard_pk" PRIMARY KEY("company_id","table_name","shard")
);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION maintain_record_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  shard_no integer := pg_backend_pid() % 32;
  live_delta bigint := 0;
  deleted_delta bigint := 0;
  company_ref uuid;
BEGIN
  IF TG_OP = 'INSERT' THEN
    company_ref := NEW.company_id;
    IF NEW.deleted_at IS NULL THEN live_delta := 1; ELSE deleted_delta := 1; END IF;
  ELSIF TG_OP = 'DELETE' THEN
    company_ref := OLD.company_id;
    IF OLD.deleted_at IS NULL THEN live_delta := -1; ELSE deleted_delta := -1; END IF;
  ELSE
    company_ref := NEW.company_id;
    IF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
      live_delta := -1; deleted_delta := 1;
    ELSIF OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL THEN
      live_delta := 1; deleted_delta := -1;
    ELSE
      RETURN NULL;
    END IF;
  END IF;
  INSERT INTO record_counts AS counts (company_id, table_name, shard, live, deleted)
  VALUES (company_ref, TG_TABLE_NAME, shard_no, live_delta, deleted_delta)
  ON CONFLICT ON CONSTRAINT record_counts_company_id_table_name_shard_pk
  DO UPDATE SET live = counts.live + EXCLUDED.live, deleted = counts.deleted + EXCLUDED.deleted;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER users_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON "users" FOR EACH ROW EXECUTE FUNCTION maintain_record_counts();
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'users', 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM "users" GROUP BY company_id;
--> statement-breakpoint
CREATE TRIGGER locations_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON "locations" FOR EACH ROW EXECUTE FUNCTION maintain_record_counts();
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'locations', 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM "locations" GROUP BY company_id;
--> statement-breakpoint
CREATE TRIGGER customers_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON "customers" FOR EACH ROW EXECUTE FUNCTION maintain_record_counts();
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'customers', 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM "customers" GROUP BY company_id;
--> statement-breakpoint
CREATE TRIGGER jobs_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON "jobs" FOR EACH ROW EXECUTE FUNCTION maintain_record_counts();
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'jobs', 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM "jobs" GROUP BY company_id;
--> statement-breakpoint
CREATE TRIGGER templates_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON "templates" FOR EACH ROW EXECUTE FUNCTION maintain_record_counts();
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'templates', 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM "templates" GROUP BY company_id;
--> statement-breakpoint
CREATE TRIGGER estimates_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON "estimates" FOR EACH ROW EXECUTE FUNCTION maintain_record_counts();
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'estimates', 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM "estimates" GROUP BY company_id;
--> statement-breakpoint
CREATE TRIGGER invoices_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON "invoices" FOR EACH ROW EXECUTE FUNCTION maintain_record_counts();
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'invoices', 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM "invoices" GROUP BY company_id;
--> statement-breakpoint
CREATE TRIGGER payments_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON "payments" FOR EACH ROW EXECUTE FUNCTION maintain_record_counts();
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'payments', 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM "payments" GROUP BY company_id;
