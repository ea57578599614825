/** The introduction of the OpenAPI document: the conventions every endpoint shares. */
export const API_DESCRIPTION = `
JSON REST API of a field-service CRM: locations, customers, jobs, job photos, templates, estimates,
invoices, payments, numbering settings and the company record.

## Authentication
Every /api/v1 endpoint needs \`Authorization: Bearer <key>\` (or \`X-API-Key: <key>\`). Keys look like
\`fsc_live_<43 characters>\` and are issued with the admin CLI or over HTTP (\`/api_keys\`). The key decides the
company: all data is that company's. A key holds scopes (\`*\`, or \`<area>:read\` / \`<area>:write\`): each
operation names the one it needs (\`x-required-scope\`), and a key without it gets 403 insufficient_scope. A test
key (\`fsc_test_...\`) works on the company's sandbox, apart from live data. A revoked key or a changed company
setting takes effect within 5 seconds.

## Envelope
Success: HTTP 200 and \`{"success": true, "data": {...}}\` (create and delete too).
Error: \`{"success": false, "error": {"code", "message", "request_id", "details": [{"field", "code", "message"}]}}\`
with the codes validation_error, invalid_status_transition, primary_location (400), unauthorized (401),
ip_restricted, insufficient_scope, addon_required, usage_limit_exceeded (403), not_found (404),
method_not_allowed (405, with an \`Allow\` header), conflict and schedule_conflict (409; schedule_conflict also
carries \`conflicts\`, the clashing visits and time off), precondition_failed (412), payload_too_large
(413), rate_limited (429), internal_error (500), service_unavailable (503). \`request_id\` is the answer's
x-request-id. Each item of \`details\` is one problem of one field, with a detail code: required, empty,
invalid_type, invalid_format, invalid_enum, out_of_range, unknown_field, read_only, invalid_reference or invalid.
Checks run in this order: 401, 403 ip_restricted, 403 insufficient_scope, 403 addon_required, 403
usage_limit_exceeded, 429, then 400 and 404.

## Requests
Bodies are strict: unknown or read-only fields are 400. On update, an absent field is unchanged and null clears a
nullable field; PUT and PATCH are both partial updates. Unknown query parameters are 400.
Money has at most 2 decimals and is never negative; quantity is > 0 with at most 3 decimals; tax rates and
percentages have at most 4 decimals. Each field states its bounds as minimum, exclusiveMinimum and maximum, and
its decimal places as \`x-decimal-places\` and in its description. Timestamps need Z or an offset and are returned in UTC.

A request body must be a JSON object: \`null\`, an array, a string or a number is 400 on every endpoint. An empty
\`application/json\` body (or only whitespace) is no body: fine where the body is optional or absent.
An estimate or invoice bills the customer of its job (and an invoice that of its estimate): another
customer_uuid is 400 invalid_reference.

## Compatibility
Within /api/v1 changes are additive: answers may gain fields and enums may gain values, so response objects
are open (no additionalProperties: false); clients ignore what they do not know. Request bodies stay strict.

## ETags and conditional requests
Every answer that carries one record (GET, create and update of an item, the company of the key) has a strong
\`ETag\` of the record's JSON; it changes whenever that JSON changes, side effects and derived values included.
GET with a matching \`If-None-Match\` (tags, \`W/\` tags or \`*\`) answers 304 with no body. PUT, PATCH and DELETE
with an \`If-Match\` (tags or \`*\`) that matches none of the record's current ETag answer 412
precondition_failed and change nothing; of two concurrent writes with the same If-Match exactly one succeeds.
Photo links are signed per window of the link lifetime, so a photo's ETag is stable between reads.

## Lists
\`include_deleted\` (a boolean; 1 and 0 work too), \`page\` (>= 1, default 1), \`limit\` (1..100, default 50). Newest first;
\`search\` is a case-insensitive substring match. Soft-deleted records are 404 unless \`include_deleted=true\`.

## Usage and rate limits
Every authenticated response carries X-Usage-Count, X-Usage-Limit (when the company has a monthly limit) and
X-Usage-Resets, 403s and 304s included. Requests refused with 403 ip_restricted or usage_limit_exceeded do not
count; their X-Usage-Count shows the current count. Requests are rate limited per key (x-ratelimit-* headers, 429 with retry-after).

## Webhooks
\`/api/v1/webhook_endpoints\` subscribes a url to event types. Each event is POSTed as JSON with the Standard Webhooks
headers \`webhook-id\` (the event uuid), \`webhook-timestamp\` (Unix seconds) and \`webhook-signature\` (\`v1,\` + base64
HMAC-SHA256 of \`<id>.<timestamp>.<body>\` keyed with the secret's bytes after \`whsec_\`); see \`webhooks.event\`.
Delivery is at least once, retried on failure, and logged at \`/webhook_endpoints/{uuid}/deliveries\`.

## More
The repository's docs/ folder explains the concepts (authentication, API keys and the sandbox, errors, lists and
sync, money and rounding, numbering, idempotency, ETags, events and webhooks, compatibility). Companies and their
first keys are made with the admin CLI (\`npm run --silent admin -- --help\`).
`.trim();
