import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import type { KeyMode } from '../../db/schema/index.js';
import { AppError, invalidField, notFound } from '../../errors.js';
import { distinctScopes, scopesWithin, type KeyScope } from '../../auth/scopes.js';
import type { KeyedWrite } from '../../auth/principal.js';
import { assertIfMatch } from '../../shared/etag.js';
import { completeKeyInTransaction, keyedWrite } from '../../shared/keyed-writes.js';
import type { Page } from '../../shared/list-query.js';
import { generateApiKey } from '../auth/api-keys.js';
import { toApiKeyResponse } from './api-keys.mapper.js';
import * as repository from './api-keys.repository.js';
import type {
  ApiKeyResponse,
  CreateApiKeyBody,
  ListApiKeysQuery,
  UpdateApiKeyBody,
} from './api-keys.schemas.js';

/** The key that manages keys: its company (the live one), its user, its mode and scopes, and If-Match. */
export interface KeyManager {
  companyId: string;
  userId: string;
  mode: KeyMode;
  scopes: ReadonlySet<string>;
  ifMatch?: string | string[];
  /** The Idempotency-Key of a keyed create or roll, completed in its transaction. */
  idempotency?: KeyedWrite;
}

/** A key with its secret, as made or rolled (a replay of the answer lacks the secret, never this). */
export type IssuedApiKey = ApiKeyResponse & { api_key: string };

export interface NewKey {
  companyId: string;
  userId: string;
  mode: KeyMode;
  scopes: readonly KeyScope[];
  allowedIps?: string[];
  name?: string | null;
  expiresAt?: Date | null;
}

/** Issues a key and answers it with its secret, the only time the secret is shown (HTTP and the admin CLI). */
export async function issueApiKey(db: Db, key: NewKey): Promise<IssuedApiKey> {
  const secret = generateApiKey(key.mode);
  const row = await repository.insertKey(db, {
    id: newRecordId(),
    companyId: key.companyId,
    userId: key.userId,
    name: key.name ?? null,
    mode: key.mode,
    scopes: distinctScopes(key.scopes),
    keyPrefix: secret.keyPrefix,
    keyHash: secret.keyHash,
    allowedIps: key.allowedIps ?? [],
    expiresAt: key.expiresAt ?? null,
  });
  return { ...toApiKeyResponse(row), api_key: secret.apiKey };
}

/** A test key sees and manages the test keys of its company only; a live key sees both modes. */
function visibleTo(manager: KeyManager): repository.KeyScopeFilter {
  return { companyId: manager.companyId, mode: manager.mode === 'test' ? 'test' : null };
}

function assertWithinScopes(manager: KeyManager, scopes: readonly string[]): void {
  if (!scopesWithin(manager.scopes, scopes)) {
    throw invalidField('scopes', `may only hold scopes the calling key holds itself (${[...manager.scopes].join(', ')})`);
  }
}

/** A key wider than the caller's cannot be changed, rolled or revoked by it. */
function assertManageable(manager: KeyManager, key: repository.ApiKeyRow): void {
  if (!scopesWithin(manager.scopes, key.scopes)) {
    throw new AppError(
      'validation_error',
      'This key holds scopes the calling key does not; a key can change, roll or revoke only keys within its own scopes.',
    );
  }
}

/** The unrevoked key, locked for the write, after the If-Match and scope checks. */
async function lockForWrite(tx: Db, manager: KeyManager, uuid: string, ifMatch: boolean): Promise<repository.ApiKeyRow> {
  const current = await repository.findKey(tx, visibleTo(manager), uuid, { lock: true });
  if (!current) throw notFound('API key');
  if (ifMatch) assertIfMatch(manager.ifMatch, toApiKeyResponse(current));
  assertManageable(manager, current);
  return current;
}

export async function listApiKeys(db: Db, manager: KeyManager, query: ListApiKeysQuery): Promise<Page<ApiKeyResponse>> {
  const page = await repository.listKeys(db, visibleTo(manager), query);
  return { items: page.items.map(toApiKeyResponse), pagination: page.pagination };
}

export async function getApiKey(db: Db, manager: KeyManager, uuid: string, includeRevoked: boolean): Promise<ApiKeyResponse> {
  const row = await repository.findKey(db, visibleTo(manager), uuid, { includeRevoked });
  if (!row) throw notFound('API key');
  return toApiKeyResponse(row);
}

/** A key made over HTTP belongs to the caller's user, within the caller's scopes and mode. */
export async function createApiKey(db: Db, manager: KeyManager, body: CreateApiKeyBody): Promise<IssuedApiKey> {
  const mode = body.mode ?? manager.mode;
  if (manager.mode === 'test' && mode === 'live') throw invalidField('mode', 'a test key can create test keys only');
  const scopes = distinctScopes(body.scopes as KeyScope[]);
  assertWithinScopes(manager, scopes);
  const key: NewKey = {
    companyId: manager.companyId,
    userId: manager.userId,
    mode,
    scopes,
    allowedIps: body.allowed_ips,
    name: body.name,
    expiresAt: body.expires_at,
  };
  if (!manager.idempotency) return issueApiKey(db, key);
  // A keyed create keeps its answer (without the secret) in the transaction of the key's insert.
  return keyedWrite(manager, () =>
    db.transaction(async (tx) => {
      const issued = await issueApiKey(tx, key);
      await completeKeyInTransaction(tx, manager, issued);
      return issued;
    }),
  );
}

export async function updateApiKey(db: Db, manager: KeyManager, uuid: string, body: UpdateApiKeyBody): Promise<ApiKeyResponse> {
  const scopes = body.scopes && distinctScopes(body.scopes as KeyScope[]);
  if (scopes) assertWithinScopes(manager, scopes);
  const row = await db.transaction(async (tx) => {
    const current = await lockForWrite(tx, manager, uuid, true);
    const values: Parameters<typeof repository.updateKey>[2] = {};
    if (body.name !== undefined) values.name = body.name;
    if (scopes) values.scopes = scopes;
    if (body.allowed_ips !== undefined) values.allowedIps = body.allowed_ips;
    if (body.expires_at !== undefined) values.expiresAt = body.expires_at;
    return Object.keys(values).length > 0 ? repository.updateKey(tx, uuid, values) : current;
  });
  return toApiKeyResponse(row);
}

/** Revokes the key: every secret of it, a rolled one in its grace period included, stops working. */
export async function revokeApiKey(db: Db, manager: KeyManager, uuid: string): Promise<void> {
  await db.transaction(async (tx) => {
    await lockForWrite(tx, manager, uuid, true);
    await repository.updateKey(tx, uuid, { revokedAt: new Date() });
    await repository.deleteRolledSecrets(tx, uuid, { all: true });
  });
}

/** A new secret for the key; the old one keeps working for graceSeconds (0: it stops at once). */
export async function rollApiKey(db: Db, manager: KeyManager, uuid: string, graceSeconds: number): Promise<IssuedApiKey> {
  return keyedWrite(manager, () => db.transaction(async (tx) => {
    const current = await lockForWrite(tx, manager, uuid, false);
    const secret = generateApiKey(current.mode);
    await repository.deleteRolledSecrets(tx, uuid, { all: false });
    if (graceSeconds > 0) {
      const old = await repository.currentSecret(tx, uuid);
      await repository.insertRolledSecret(tx, uuid, old, new Date(Date.now() + graceSeconds * 1000));
    }
    const row = await repository.updateKey(tx, uuid, { keyPrefix: secret.keyPrefix, keyHash: secret.keyHash });
    const rolled = { ...toApiKeyResponse(row), api_key: secret.apiKey };
    // A keyed roll keeps its answer (without the secret) in this transaction.
    await completeKeyInTransaction(tx, manager, rolled);
    return rolled;
  }));
}
