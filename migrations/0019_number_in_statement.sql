-- A document created in one statement takes its number in that statement (numbering.repository.ts,
-- numberedGuard): the company's counter row is then locked from that point of the statement to its commit,
-- as the deferred trigger locks it from the commit's start, and the document, its created event and the key's
-- kept answer are written with the number instead of being rewritten at commit. take_document_number() is the
-- one rule for taking a number, used by that statement and by number_document(); last_number is the number it
-- gave, so its RETURNING can answer it.
ALTER TABLE "numbering_counters" ADD COLUMN "last_number" bigint;--> statement-breakpoint
CREATE OR REPLACE FUNCTION take_document_number(company uuid, document_kind text, OUT seq bigint, OUT formatted text)
LANGUAGE plpgsql
AS $$
BEGIN
  -- A company's first document of the kind creates its counter with the defaults (next_number 1, so it takes 1).
  INSERT INTO numbering_counters AS c (company_id, kind, prefix, next_number, last_number)
    VALUES (company, document_kind, default_number_prefix(document_kind), 2, 1)
    ON CONFLICT (company_id, kind) DO UPDATE
      SET last_number = coalesce(c.override_next_number, c.next_number),
        next_number = greatest(c.next_number, coalesce(c.override_next_number, c.next_number) + 1),
        override_next_number = NULL, updated_at = now()
    RETURNING c.last_number, document_number(c.prefix, c.padding, c.last_number) INTO seq, formatted;
END
$$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION number_document() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
  document_kind constant text := TG_ARGV[0];
  placeholder constant text := '"' || TG_ARGV[0] || '_number":null';
  taken bigint;
  formatted text;
BEGIN
  SELECT n.seq, n.formatted INTO taken, formatted FROM take_document_number(NEW.company_id, document_kind) n;

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
