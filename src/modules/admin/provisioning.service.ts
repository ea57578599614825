import { emailAddress } from '../../shared/formats.js';
import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { ALL_ADDONS, type KeyMode } from '../../db/schema/index.js';
import { insertCompany, updateCompanySettings } from '../companies/companies.repository.js';
import { mirrorUsersToSandbox } from '../companies/sandbox.service.js';
import { insertUser } from '../users/users.repository.js';
import { isIpOrCidr } from '../auth/api-keys.js';
import { issueApiKey } from '../api-keys/api-keys.service.js';
import * as repository from './admin.repository.js';

/** Company, user and key provisioning: used by the admin CLI, the demo bootstrap and the tests. */

export class ProvisioningError extends Error {}

export function parseAddons(list: string): string[] {
  const addons = list
    .split(',')
    .map((addon) => addon.trim())
    .filter(Boolean);
  for (const addon of addons) {
    if (!(ALL_ADDONS as readonly string[]).includes(addon)) {
      throw new ProvisioningError(`Unknown add-on '${addon}'; known: ${ALL_ADDONS.join(', ')}`);
    }
  }
  return [...new Set(addons)];
}

export function parseAllowedIps(list: string): string[] {
  const entries = list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (!isIpOrCidr(entry)) throw new ProvisioningError(`Not an IP address or CIDR: '${entry}'`);
  }
  return entries;
}

export interface NewCompany {
  name: string;
  email: string;
  addons?: string[];
  monthlyRequestLimit?: number | null;
}

/** An email as the API accepts one (shared/formats.ts), so what the CLI stores GET /users can answer. */
const isEmail = (value: string) => emailAddress.safeParse(value).success;

export async function createCompany(db: Db, input: NewCompany) {
  if (!input.name.trim()) throw new ProvisioningError('--name is required');
  if (!isEmail(input.email)) throw new ProvisioningError('--email must be an email address');
  return db.transaction(async (tx) => {
    const company = await insertCompany(tx, {
      uuid: newRecordId(),
      name: input.name.trim(),
      email: input.email,
      addons: input.addons ?? [...ALL_ADDONS],
      monthlyRequestLimit: input.monthlyRequestLimit ?? null,
    });
    const owner = await insertUser(tx, {
      companyId: company.uuid,
      uuid: newRecordId(),
      firstName: 'Account',
      lastName: 'Owner',
      email: input.email,
    });
    const key = await insertKey(tx, { companyId: company.uuid, userId: owner.id, mode: 'live', allowedIps: [] });
    return { company_uuid: company.uuid, user_id: owner.id, api_key: key.api_key };
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A live company: a sandbox is reached through its company's test keys, never named here. */
async function requireCompany(db: Db, companyId: string) {
  if (!UUID.test(companyId) || !(await repository.findLiveCompany(db, companyId.toLowerCase()))) {
    throw new ProvisioningError(`No company ${companyId}`);
  }
  return companyId.toLowerCase();
}

export async function createUser(
  db: Db,
  input: { companyId: string; firstName: string; lastName: string; email?: string | null },
) {
  const companyId = await requireCompany(db, input.companyId);
  if (!input.firstName.trim() || !input.lastName.trim()) {
    throw new ProvisioningError('--first-name and --last-name are required');
  }
  // The user's email is shown by GET /users as an email or null, like every email of the API.
  if (input.email != null && !isEmail(input.email)) throw new ProvisioningError('--email must be an email address');
  const user = await insertUser(db, {
    companyId,
    uuid: newRecordId(),
    firstName: input.firstName.trim(),
    lastName: input.lastName.trim(),
    email: input.email ?? null,
  });
  // The sandbox keeps a copy of every user (same id), so test requests can name this one too.
  await mirrorUsersToSandbox(db, companyId);
  return { user_id: user.id };
}

/** A CLI-made key holds every scope (`*`). */
function insertKey(db: Db, key: { companyId: string; userId: string; mode: KeyMode; allowedIps: string[] }) {
  return issueApiKey(db, { ...key, scopes: ['*'] });
}

export async function createApiKey(db: Db, input: { companyId: string; userId?: string; allowedIps?: string[]; test?: boolean }) {
  const companyId = await requireCompany(db, input.companyId);
  let userId = input.userId?.toLowerCase();
  if (userId) {
    // Not a UUID cannot name a user; database errors are not hidden behind "No user".
    const user = UUID.test(userId) ? await repository.findLiveUser(db, companyId, userId) : null;
    if (!user) throw new ProvisioningError(`No user ${input.userId} in company ${companyId}`);
  } else {
    const owner = await repository.findOwner(db, companyId);
    if (!owner) throw new ProvisioningError(`Company ${companyId} has no user; create one first`);
    userId = owner.id;
  }
  const key = await insertKey(db, { companyId, userId, mode: input.test ? 'test' : 'live', allowedIps: input.allowedIps ?? [] });
  return { api_key: key.api_key, key_prefix: key.key_prefix };
}

export async function revokeApiKey(db: Db, keyPrefix: string) {
  if (!(await repository.revokeKeyByPrefix(db, keyPrefix))) throw new ProvisioningError(`No active key with prefix ${keyPrefix}`);
  return { revoked: true };
}

export async function setCompany(
  db: Db,
  input: { companyId: string; addons?: string[]; monthlyRequestLimit?: number | null },
) {
  const companyId = await requireCompany(db, input.companyId);
  const values: { addons?: string[]; monthlyRequestLimit?: number | null } = {};
  if (input.addons !== undefined) values.addons = input.addons;
  if (input.monthlyRequestLimit !== undefined) values.monthlyRequestLimit = input.monthlyRequestLimit;
  await updateCompanySettings(db, companyId, values);
  return { company_uuid: companyId };
}

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

/** Every company, oldest first, with its settings (no keys). */
export async function listCompanies(db: Db) {
  const rows = await repository.selectCompanies(db);
  return {
    companies: rows.map((row) => ({
      company_uuid: row.uuid,
      name: row.name,
      email: row.email,
      addons: row.addons,
      monthly_request_limit: row.monthlyRequestLimit,
      created_at: iso(row.createdAt),
    })),
  };
}

/**
 * A company's keys, newest first, revoked ones included (with revoked_at). Only the public prefix is
 * shown: the key itself is stored as a hash and cannot be shown again.
 */
export async function listApiKeys(db: Db, input: { companyId: string }) {
  const companyId = await requireCompany(db, input.companyId);
  const rows = await repository.selectApiKeysOfCompany(db, companyId);
  return {
    company_uuid: companyId,
    api_keys: rows.map((row) => ({
      uuid: row.id,
      name: row.name,
      key_prefix: row.keyPrefix,
      mode: row.mode,
      scopes: row.scopes,
      user_id: row.userId,
      user_name: `${row.firstName} ${row.lastName}`,
      allowed_ips: row.allowedIps,
      created_at: iso(row.createdAt),
      last_used_at: iso(row.lastUsedAt),
      expires_at: iso(row.expiresAt),
      revoked_at: iso(row.revokedAt),
    })),
  };
}

export async function hasAnyCompany(db: Db): Promise<boolean> {
  return repository.anyCompanyExists(db);
}
