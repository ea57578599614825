-- record_counts also keeps counts per status value (table_name 'jobs:status=Scheduled'), for the tables whose
-- trigger names a bucket column, so a list filtered by status reads its total from a few small rows.
CREATE OR REPLACE FUNCTION add_record_count(company uuid, counted text, shard_no integer, is_live boolean, delta bigint)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO record_counts AS counts (company_id, table_name, shard, live, deleted)
  VALUES (company, counted, shard_no, CASE WHEN is_live THEN delta ELSE 0 END, CASE WHEN is_live THEN 0 ELSE delta END)
  ON CONFLICT ON CONSTRAINT record_counts_company_id_table_name_shard_pk
  DO UPDATE SET live = counts.live + EXCLUDED.live, deleted = counts.deleted + EXCLUDED.deleted;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION maintain_record_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  shard_no integer := pg_backend_pid() % 32;
  bucket_column text := TG_ARGV[0];
  old_live boolean;
  new_live boolean;
  old_bucket text;
  new_bucket text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    old_live := OLD.deleted_at IS NULL;
    IF bucket_column IS NOT NULL THEN old_bucket := to_jsonb(OLD) ->> bucket_column; END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    new_live := NEW.deleted_at IS NULL;
    IF bucket_column IS NOT NULL THEN new_bucket := to_jsonb(NEW) ->> bucket_column; END IF;
  END IF;
  IF TG_OP = 'UPDATE' AND old_live = new_live AND old_bucket IS NOT DISTINCT FROM new_bucket THEN
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' THEN
    IF TG_OP = 'DELETE' OR old_live <> new_live THEN
      PERFORM add_record_count(OLD.company_id, TG_TABLE_NAME, shard_no, old_live, -1);
    END IF;
    IF old_bucket IS NOT NULL THEN
      PERFORM add_record_count(OLD.company_id, TG_TABLE_NAME || ':' || bucket_column || '=' || old_bucket, shard_no, old_live, -1);
    END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    IF TG_OP = 'INSERT' OR old_live <> new_live THEN
      PERFORM add_record_count(NEW.company_id, TG_TABLE_NAME, shard_no, new_live, 1);
    END IF;
    IF new_bucket IS NOT NULL THEN
      PERFORM add_record_count(NEW.company_id, TG_TABLE_NAME || ':' || bucket_column || '=' || new_bucket, shard_no, new_live, 1);
    END IF;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
DROP TRIGGER jobs_record_counts ON jobs;
--> statement-breakpoint
CREATE TRIGGER jobs_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at, status ON jobs FOR EACH ROW EXECUTE FUNCTION maintain_record_counts('status');
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'jobs:status=' || status, 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM jobs GROUP BY company_id, status;
--> statement-breakpoint
DROP TRIGGER estimates_record_counts ON estimates;
--> statement-breakpoint
CREATE TRIGGER estimates_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at, status ON estimates FOR EACH ROW EXECUTE FUNCTION maintain_record_counts('status');
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'estimates:status=' || status, 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM estimates GROUP BY company_id, status;
--> statement-breakpoint
DROP TRIGGER payments_record_counts ON payments;
--> statement-breakpoint
CREATE TRIGGER payments_record_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at, status ON payments FOR EACH ROW EXECUTE FUNCTION maintain_record_counts('status');
--> statement-breakpoint
INSERT INTO record_counts (company_id, table_name, shard, live, deleted)
SELECT company_id, 'payments:status=' || status, 0, count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) FROM payments GROUP BY company_id, status;
