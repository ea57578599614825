/**
 * The direction of imports, held in CI (`npm run depcheck`): routes -> services -> repositories -> db,
 * with shared, db and the auth types at the bottom, the change recorder knowing no resource, and no loop.
 * Infrastructure plugins sit between the routes and the services: they use services and repositories
 * (auth, idempotency, event retention, webhook delivery); routes may use them; nothing below does.
 * See README.md, "Where things live". Any violation fails.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Imports form a loop: move what both sides need below them (a schema type, a view model, a shared helper).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'db-imports-no-module',
      severity: 'error',
      comment: 'src/db is the bottom layer: the schema and the driver import only each other, config.ts and errors.ts. Types the database stores live in db/schema.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: ['^src/db/', '^src/(config|errors)\\.ts$'] },
    },
    {
      name: 'shared-imports-no-module',
      severity: 'error',
      comment: 'src/shared is below every module: it imports only shared, db, the auth types, config.ts and errors.ts.',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: ['^src/(shared|db|auth)/', '^src/(config|errors)\\.ts$'] },
    },
    {
      name: 'auth-types-import-nothing',
      severity: 'error',
      comment: 'src/auth holds the types every layer shares (Principal, Actor): it imports nothing of src.',
      from: { path: '^src/auth/' },
      to: { path: '^src/', pathNot: '^src/auth/' },
    },
    {
      name: 'recorder-knows-no-resource',
      severity: 'error',
      comment: 'The change recorder (src/modules/changes) is handed its registry (src/modules/events/recorded-types.ts); it imports no resource module.',
      from: { path: '^src/modules/changes/' },
      to: { path: '^src/modules/', pathNot: '^src/modules/changes/' },
    },
    {
      name: 'repositories-import-no-service',
      severity: 'error',
      comment: 'A repository is SQL only: it imports no service or routes (services call repositories, never the other way).',
      from: { path: '\\.repository\\.ts$' },
      to: { path: '\\.(service|routes)\\.ts$' },
    },
    {
      name: 'modules-below-routes-and-plugins',
      severity: 'error',
      comment: 'Services, repositories, schemas, mappers and rules import no routes, no plugin and not the app: HTTP and infrastructure sit above them.',
      from: { path: '^src/modules/', pathNot: '\\.routes\\.ts$' },
      to: { path: ['\\.routes\\.ts$', '^src/plugins/', '^src/(app|routes|server)\\.ts$', '^src/cli/'] },
    },
    {
      name: 'routes-registered-by-the-app',
      severity: 'error',
      comment: "A module's routes are registered by src/routes.ts or src/app.ts; another module never imports them (share what both need from a lower file).",
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '\\.routes\\.ts$', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'plugins-below-the-app',
      severity: 'error',
      comment: 'Plugins are infrastructure under the routes: they import no routes file and not the app.',
      from: { path: '^src/plugins/' },
      to: { path: ['\\.routes\\.ts$', '^src/(app|routes|server)\\.ts$', '^src/cli/'] },
    },
    {
      name: 'entry-points-imported-by-nothing',
      severity: 'error',
      comment: 'src/server.ts and src/cli/ are entry points; only server.ts builds the app.',
      from: { path: '^src/' },
      to: { path: ['^src/server\\.ts$', '^src/cli/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type import upward is as much a loop as a value import.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: {},
  },
};
