-- Idempotency keys complete in the transaction of the work they guard (docs/idempotency.md): the key row is
-- written with its answer before the commit, so a committed write always has its completed key and an
-- uncommitted one never has. record_uuid names the record a create made: number_document() writes the
-- number it gives at commit into that key's kept answer too, as it does into the created event.
ALTER TABLE "idempotency_keys" ADD COLUMN "record_uuid" uuid;--> statement-breakpoint
CREATE INDEX "idempotency_keys_record_idx" ON "idempotency_keys" USING btree ("company_id","record_uuid") WHERE "idempotency_keys"."record_uuid" is not null;--> statement-breakpoint
CREATE OR REPLACE FUNCTION number_document() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
  document_kind constant text := TG_ARGV[0];
  placeholder constant text := '"' || TG_ARGV[0] || '_number":null';
  taken bigint;
  counter_prefix text;
  counter_padding integer;
  formatted text;
BEGIN
  SELECT coalesce(c.override_next_number, c.next_number), c.prefix, c.padding
    INTO taken, counter_prefix, counter_padding
    FROM numbering_counters c WHERE c.company_id = NEW.company_id AND c.kind = document_kind FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO numbering_counters (company_id, kind, prefix)
      VALUES (NEW.company_id, document_kind, default_number_prefix(document_kind)) ON CONFLICT DO NOTHING;
    SELECT coalesce(c.override_next_number, c.next_number), c.prefix, c.padding
      INTO taken, counter_prefix, counter_padding
      FROM numbering_counters c WHERE c.company_id = NEW.company_id AND c.kind = document_kind FOR UPDATE;
  END IF;
  UPDATE numbering_counters c
    SET next_number = greatest(c.next_number, taken + 1), override_next_number = NULL, updated_at = now()
    WHERE c.company_id = NEW.company_id AND c.kind = document_kind;
  formatted := document_number(counter_prefix, counter_padding, taken);

  -- One static statement per table, so each keeps its cached plan.
  IF document_kind = 'invoice' THEN
    UPDATE invoices SET invoice_number = formatted, invoice_seq = taken WHERE company_id = NEW.company_id AND uuid = NEW.uuid;
  ELSIF document_kind = 'estimate' THEN
    UPDATE estimates SET estimate_number = formatted, estimate_seq = taken WHERE company_id = NEW.company_id AND uuid = NEW.uuid;
  ELSE
    UPDATE payments SET payment_number = formatted, payment_seq = taken WHERE company_id = NEW.company_id AND uuid = NEW.uuid;
  END IF;

  UPDATE events e
    SET data = overlay(e.data::text PLACING '"' || document_kind || '_number":' || to_json(formatted)::text
      FROM position(placeholder IN e.data::text) FOR length(placeholder))::json
    WHERE e.company_id = NEW.company_id AND e.object_uuid = NEW.uuid AND e.type = document_kind || '.created'
      AND position(placeholder IN e.data::text) > 0;
  -- The answer kept for the create's Idempotency-Key, written in the same transaction with the field null.
  UPDATE idempotency_keys k
    SET response_body = overlay(k.response_body PLACING '"' || document_kind || '_number":' || to_json(formatted)::text
      FROM position(placeholder IN k.response_body) FOR length(placeholder))
    WHERE k.company_id = NEW.company_id AND k.record_uuid = NEW.uuid AND position(placeholder IN k.response_body) > 0;
  -- Tells the committing client the number with the commit, so it need not read it back.
  RAISE NOTICE 'document_numbered' USING DETAIL = NEW.uuid::text || ' ' || formatted;
  RETURN NULL;
END
$$;
