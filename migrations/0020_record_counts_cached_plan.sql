-- add_record_count in PL/pgSQL: a SQL-language function called from a trigger plans its INSERT ... ON CONFLICT
-- afresh on every call, while PL/pgSQL keeps the plan for the connection. Every insert and soft delete of a
-- counted table calls it once or twice; the statement is the same as before (migration 0006).
CREATE OR REPLACE FUNCTION add_record_count(company uuid, counted text, shard_no integer, is_live boolean, delta bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO record_counts AS counts (company_id, table_name, shard, live, deleted)
  VALUES (company, counted, shard_no, CASE WHEN is_live THEN delta ELSE 0 END, CASE WHEN is_live THEN 0 ELSE delta END)
  ON CONFLICT ON CONSTRAINT record_counts_company_id_table_name_shard_pk
  DO UPDATE SET live = counts.live + EXCLUDED.live, deleted = counts.deleted + EXCLUDED.deleted;
END;
$$;
