-- Document numbers are taken at commit. An invoice, estimate or payment is inserted without a number; a
-- deferred constraint trigger numbers it when its transaction commits. The company's counter row is then
-- locked only for the trigger and the commit itself, never across a round trip to the API, so concurrent
-- creates still get consecutive numbers and a rolled-back create leaves no gap, at a far higher rate.

-- The prefix a company's counter starts with, until it sets its own.
CREATE OR REPLACE FUNCTION default_number_prefix(kind text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE kind WHEN 'invoice' THEN 'INV-' WHEN 'estimate' THEN 'EST-' WHEN 'payment' THEN 'PAY-' END $$;
--> statement-breakpoint

-- TG_ARGV[0] is the kind: invoice, estimate or payment. The counter row (created with the defaults when the
-- company has none) is locked, its override or next number is taken, and it moves to
-- max(next_number, taken + 1) with the override cleared. The document gets the formatted number and its seq;
-- its updated_at stays, so its GET still equals its created event. That event was stored with the field null:
-- the first `"<kind>_number":null` of its text is the document's own key (the mappers write it right after
-- the uuid, before any free-form object such as payment_details in which a client could send the same key).
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
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER invoices_number_at_commit AFTER INSERT ON invoices DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.invoice_number IS NULL) EXECUTE FUNCTION number_document('invoice');
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER estimates_number_at_commit AFTER INSERT ON estimates DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.estimate_number IS NULL) EXECUTE FUNCTION number_document('estimate');
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER payments_number_at_commit AFTER INSERT ON payments DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.payment_number IS NULL) EXECUTE FUNCTION number_document('payment');
