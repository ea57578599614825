import type { ApiKeyRow } from './api-keys.repository.js';
import type { ApiKeyResponse } from './api-keys.schemas.js';

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

/** A key as the API answers it: never its secret or the secret's hash. */
export function toApiKeyResponse(row: ApiKeyRow): ApiKeyResponse {
  return {
    uuid: row.id,
    name: row.name,
    key_prefix: row.keyPrefix,
    mode: row.mode,
    scopes: row.scopes,
    allowed_ips: row.allowedIps,
    user_id: row.userId,
    created_at: row.createdAt.toISOString(),
    last_used_at: iso(row.lastUsedAt),
    expires_at: iso(row.expiresAt),
    revoked_at: iso(row.revokedAt),
  };
}
