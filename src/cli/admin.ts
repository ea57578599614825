import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { createDatabase, type Db } from '../db/client.js';
import { migrateDatabase } from '../db/migrate.js';
import {
  createApiKey,
  createCompany,
  createUser,
  parseAddons,
  parseAllowedIps,
  ProvisioningError,
  revokeApiKey,
  setCompany,
} from '../modules/auth/provisioning.service.js';

const USAGE = `Usage: npm run --silent admin -- <command> [options]
  create-company --name NAME --email EMAIL [--addons photos,numbering] [--monthly-request-limit N]
  create-user --company UUID --first-name F --last-name L [--email E]
  create-api-key --company UUID [--user USER_ID] [--allowed-ips CIDR,CIDR]
  revoke-api-key --key-prefix PREFIX
  set-company --company UUID [--addons LIST] [--monthly-request-limit N|none]`;

const OPTIONS = {
  name: { type: 'string' },
  email: { type: 'string' },
  addons: { type: 'string' },
  'monthly-request-limit': { type: 'string' },
  company: { type: 'string' },
  'first-name': { type: 'string' },
  'last-name': { type: 'string' },
  user: { type: 'string' },
  'allowed-ips': { type: 'string' },
  'key-prefix': { type: 'string' },
  help: { type: 'boolean' },
} as const;

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new ProvisioningError(`--${name} is required`);
  return value;
}

function parseLimit(value: string | undefined, allowNone: boolean): number | null | undefined {
  if (value === undefined) return undefined;
  if (allowNone && value === 'none') return null;
  if (!/^\d+$/.test(value) || Number(value) > Number.MAX_SAFE_INTEGER) {
    throw new ProvisioningError(`--monthly-request-limit must be a non-negative integer${allowNone ? ' or none' : ''}`);
  }
  return Number(value);
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command] = positionals;
  if (!command || values.help) {
    process.stderr.write(`${USAGE}\n`);
    return command || values.help ? 0 : 2;
  }
  // Arguments are checked before the database is opened: bad input never touches it.
  let run: (db: Db) => Promise<unknown>;
  switch (command) {
    case 'create-company': {
      const input = {
        name: required(values, 'name'),
        email: required(values, 'email'),
        addons: values.addons === undefined ? undefined : parseAddons(values.addons),
        monthlyRequestLimit: parseLimit(values['monthly-request-limit'], false) ?? null,
      };
      run = (db) => createCompany(db, input);
      break;
    }
    case 'create-user': {
      const input = {
        companyId: required(values, 'company'),
        firstName: required(values, 'first-name'),
        lastName: required(values, 'last-name'),
        email: values.email ?? null,
      };
      run = (db) => createUser(db, input);
      break;
    }
    case 'create-api-key': {
      const input = {
        companyId: required(values, 'company'),
        userId: values.user,
        allowedIps: values['allowed-ips'] === undefined ? [] : parseAllowedIps(values['allowed-ips']),
      };
      run = (db) => createApiKey(db, input);
      break;
    }
    case 'revoke-api-key': {
      const keyPrefix = required(values, 'key-prefix');
      run = (db) => revokeApiKey(db, keyPrefix);
      break;
    }
    case 'set-company': {
      const input = {
        companyId: required(values, 'company'),
        addons: values.addons === undefined ? undefined : parseAddons(values.addons),
        monthlyRequestLimit: parseLimit(values['monthly-request-limit'], true),
      };
      run = (db) => setCompany(db, input);
      break;
    }
    default:
      throw new ProvisioningError(`Unknown command '${command}'\n${USAGE}`);
  }

  const config = loadConfig();
  const database = await createDatabase(config);
  try {
    if (config.MIGRATE_ON_START) await migrateDatabase(database);
    const result = await run(database.db);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = error instanceof ProvisioningError || (error instanceof Error && 'code' in error && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
      ? (error as Error).message
      : `admin: ${(error as Error)?.message ?? String(error)}`;
    process.stderr.write(`${message}\n`);
    process.exitCode = 1;
  },
);
