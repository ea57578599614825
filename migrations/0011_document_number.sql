-- The one formatting rule of document numbers: prefix + seq zero-padded to padding; a wider seq prints in full.
CREATE OR REPLACE FUNCTION document_number(prefix text, padding integer, seq bigint) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT prefix || lpad(seq::text, greatest(padding, length(seq::text)), '0') $$;
