import { z } from 'zod';
import { ALL_SCOPES, SCOPES } from '../../auth/scopes.js';
import { KEY_MODES } from '../../db/schema/index.js';
import { nullableString, timestampInput, timestampOutput } from '../../shared/formats.js';
import { pageQueryShape } from '../../shared/list-query.js';
import { detail } from '../../shared/validation.js';
import { isIpOrCidr } from '../auth/api-keys.js';

/** The longest grace period of a roll: 7 days. */
export const MAX_GRACE_SECONDS = 604_800;
export const MAX_ALLOWED_IPS = 100;

const scopeList = [ALL_SCOPES, ...SCOPES] as [string, ...string[]];

const scopes = z
  .array(z.enum(scopeList, { error: `must be one of: ${scopeList.join(', ')}` }))
  .min(1, 'must list at least one scope')
  .max(scopeList.length, `must list at most ${scopeList.length} scopes`)
  .refine((list) => !list.includes(ALL_SCOPES) || list.length === 1, {
    message: 'must be ["*"] alone or a list of <area>:read / <area>:write scopes, not both',
    params: detail('invalid'),
  })
  .describe(
    '`["*"]` for everything, or `<area>:read` / `<area>:write` scopes (write implies read). Areas: ' +
      `${[...new Set(SCOPES.map((scope) => scope.split(':')[0]))].join(', ')}. Only scopes the calling key holds itself.`,
  )
  .meta({ example: ['invoices:read', 'payments:write'] });

const name = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  .nullable()
  .optional()
  .describe('A label for people, e.g. what the key is for.')
  .meta({ example: 'Accounting connector' });

const allowedIps = z
  .array(
    z
      .string()
      .max(64, 'must be an IPv4 or IPv6 address or CIDR range')
      .refine(isIpOrCidr, 'must be an IPv4 or IPv6 address or CIDR range'),
  )
  .max(MAX_ALLOWED_IPS, `must list at most ${MAX_ALLOWED_IPS} entries`)
  .describe('Addresses and CIDR ranges (IPv4 or IPv6) the key may be used from; empty means any.')
  .meta({ example: ['203.0.113.0/24', '2001:db8::/32'] });

// A time already past is accepted: the key is expired from then on, which is how a client ends it at once.
const expiresAt = timestampInput
  .nullable()
  .optional()
  .describe('When the key stops working (401 from then on; a time already past expires it at once); null or absent: never.');

export const CreateApiKeyBody = z
  .strictObject({
    name,
    scopes,
    mode: z
      .enum(KEY_MODES, { error: 'must be live or test' })
      .optional()
      .describe("live (the company's data) or test (its sandbox); default the calling key's mode. A test key makes test keys only.")
      .meta({ example: 'test' }),
    allowed_ips: allowedIps.optional(),
    expires_at: expiresAt,
  })
  .meta({ id: 'CreateApiKeyBody' });
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

export const UpdateApiKeyBody = z
  .strictObject({ name, scopes: scopes.optional(), allowed_ips: allowedIps.optional(), expires_at: expiresAt })
  .meta({ id: 'UpdateApiKeyBody' });
export type UpdateApiKeyBody = z.infer<typeof UpdateApiKeyBody>;

export const RollApiKeyBody = z
  .strictObject({
    grace_seconds: z
      .number({ error: `must be an integer from 0 to ${MAX_GRACE_SECONDS}` })
      .int(`must be an integer from 0 to ${MAX_GRACE_SECONDS}`)
      .min(0, `must be an integer from 0 to ${MAX_GRACE_SECONDS}`)
      .max(MAX_GRACE_SECONDS, `must be an integer from 0 to ${MAX_GRACE_SECONDS}`)
      .optional()
      .describe('How long the old secret keeps working, in seconds (0 to 604800, 7 days); default 0: it stops at once.')
      .meta({ example: 3600 }),
  })
  .meta({ id: 'RollApiKeyBody' });
export type RollApiKeyBody = z.infer<typeof RollApiKeyBody>;

export const ListApiKeysQuery = z.strictObject({
  ...pageQueryShape,
  include_deleted: pageQueryShape.include_deleted.describe('Include revoked keys.'),
});
export type ListApiKeysQuery = z.infer<typeof ListApiKeysQuery>;

const keyShape = {
  uuid: z.string().meta({ format: 'uuid' }),
  name: nullableString.meta({ example: 'Accounting connector' }),
  key_prefix: z
    .string()
    .describe('The first 17 characters of the current secret (`fsc_live_` or `fsc_test_` and 8 more): names the key in logs and lists.')
    .meta({ example: 'fsc_test_Q2hhbmdl' }),
  mode: z.enum(KEY_MODES).describe("live: the company's data; test: its sandbox."),
  scopes: z.array(z.string()).describe('`["*"]`, or the scopes the key holds.').meta({ example: ['invoices:read', 'payments:write'] }),
  allowed_ips: z.array(z.string()).meta({ example: ['203.0.113.0/24'] }),
  user_id: z.string().describe('The user the key acts as (created_by_user_id of what it creates).'),
  created_at: timestampOutput,
  last_used_at: timestampOutput.nullable().describe('When the key last authenticated a request; at most a minute behind.'),
  expires_at: timestampOutput.nullable().describe('When the key stops working; null: never.'),
  revoked_at: timestampOutput.nullable().describe('When the key was revoked (DELETE); null while it is not.'),
};

export const ApiKeyResponse = z.object(keyShape).meta({ id: 'ApiKey' });
export type ApiKeyResponse = z.infer<typeof ApiKeyResponse>;

/** The create and roll answers: the record plus its secret, shown this once. */
export const ApiKeyWithSecret = z
  .object({
    ...keyShape,
    api_key: z
      .string()
      .describe(
        'The secret: `fsc_live_` or `fsc_test_` + 43 base64url characters. Shown only in this answer; store it now. ' +
          'A replay of the request (same Idempotency-Key) answers without it: the secret is kept only as its hash; roll the key for a new one.',
      )
      .optional()
      .meta({ example: 'fsc_test_Q2hhbmdlTWVJbkFTYWZlUGxhY2VUaGlzSXNBbkV4YW1' }),
  })
  .meta({ id: 'ApiKeyWithSecret' });
