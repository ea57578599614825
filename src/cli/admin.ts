import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { createDatabase, type Db } from '../db/client.js';
import { migrateDatabase } from '../db/migrate.js';
import {
  createApiKey,
  createCompany,
  createUser,
  listApiKeys,
  listCompanies,
  parseAddons,
  parseAllowedIps,
  ProvisioningError,
  revokeApiKey,
  setCompany,
} from '../modules/admin/provisioning.service.js';

/** One entry per command: its synopsis and what it prints, for --help. */
const COMMANDS: Record<string, { synopsis: string; help: string }> = {
  'create-company': {
    synopsis: 'create-company --name NAME --email EMAIL [--addons photos,numbering] [--monthly-request-limit N]',
    help:
      'Creates a company, its owner user and an API key for that user.\n' +
      "--addons: comma-separated add-ons (photos, numbering); '' means none; default all.\n" +
      '--monthly-request-limit: requests a month (UTC calendar months); default unlimited.\n' +
      'Prints {"company_uuid", "user_id", "api_key"}. The key is shown only this once.',
  },
  'create-user': {
    synopsis: 'create-user --company UUID --first-name F --last-name L [--email E]',
    help: 'Adds a user to a company. Prints {"user_id"}.',
  },
  'create-api-key': {
    synopsis: 'create-api-key --company UUID [--user USER_ID] [--allowed-ips CIDR,CIDR] [--test]',
    help:
      'Issues a key with every scope (*) for a user of the company (default: its first user).\n' +
      '--allowed-ips: IPv4/IPv6 addresses or CIDR ranges the key may be used from; default any.\n' +
      "--test: a test key (fsc_test_...), working on the company's sandbox instead of its live data.\n" +
      'Prints {"api_key", "key_prefix"}. The key is shown only this once.',
  },
  'revoke-api-key': {
    synopsis: 'revoke-api-key --key-prefix PREFIX',
    help: 'Revokes a key; every instance refuses it within 5 seconds. Prints {"revoked": true}.',
  },
  'set-company': {
    synopsis: 'set-company --company UUID [--addons LIST] [--monthly-request-limit N|none]',
    help: 'Changes a company\'s add-ons and monthly request limit (none: unlimited). Prints {"company_uuid"}.',
  },
  'list-companies': {
    synopsis: 'list-companies',
    help: 'Lists every company, oldest first. Prints {"companies": [{"company_uuid", "name", "email", "addons", "monthly_request_limit", "created_at"}]}.',
  },
  'list-api-keys': {
    synopsis: 'list-api-keys --company UUID',
    help:
      'Lists the keys of a company, live and test, newest first, revoked ones included. Never shows a key, only its prefix.\n' +
      'Prints {"company_uuid", "api_keys": [{"uuid", "name", "key_prefix", "mode", "scopes", "user_id", "user_name", ' +
      '"allowed_ips", "created_at", "last_used_at", "expires_at", "revoked_at"}]}. last_used_at is at most a minute behind.',
  },
};

const USAGE = `Usage: npm run --silent admin -- <command> [options]

Provisioning for the field-service CRM API. Works on the database of DATABASE_URL (else the embedded one
under DATA_DIR). Prints one JSON object on stdout and exits 0; on error prints a message on stderr and
exits non-zero.

Commands:
${Object.values(COMMANDS)
  .map((command) => `  ${command.synopsis}`)
  .join('\n')}

Options:
  --help       this text, or with a command that command's help
  --version    the version of the API`;

function commandHelp(name: string): string {
  const command = COMMANDS[name];
  return `Usage: npm run --silent admin -- ${command.synopsis}\n\n${command.help}`;
}

function version(): string {
  // src/cli and dist/cli are both two levels below package.json.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

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
  test: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
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
  if (values.version) {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  // Help that was asked for goes to stdout; usage after a mistake goes to stderr.
  if (command === 'help' || values.help) {
    const topic = command === 'help' ? positionals[1] : command;
    if (topic && !COMMANDS[topic]) throw new ProvisioningError(`Unknown command '${topic}'\n${USAGE}`);
    process.stdout.write(`${topic ? commandHelp(topic) : USAGE}\n`);
    return 0;
  }
  if (!command) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  // Every value is an option's: a stray word is a mistake (a value without its option), not something to drop.
  if (positionals.length > 1 && COMMANDS[command]) {
    throw new ProvisioningError(`Unexpected argument '${positionals[1]}'\n${commandHelp(command)}`);
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
        test: values.test ?? false,
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
    case 'list-companies': {
      run = (db) => listCompanies(db);
      break;
    }
    case 'list-api-keys': {
      const input = { companyId: required(values, 'company') };
      run = (db) => listApiKeys(db, input);
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
