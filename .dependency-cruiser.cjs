// The layers of the service and what each may import (docs/architecture.md describes them).
// Checked by `npm run lint` (and so by `npm test`): `npx depcruise .` prints each violation with its rule's name.
//
// Parser: swc. The project compiles with TypeScript 7 (the native compiler), whose package no longer
// exports the TypeScript 5 JavaScript API that dependency-cruiser's own `tsc` parser and its acorn
// path (which strips types with `ts.transpileModule`) need; without a parser for `.ts` it would
// silently scan nothing. swc parses TypeScript natively and, unlike a transpile-then-parse step,
// keeps `import type` declarations, so type-only imports count toward cycles and layers.

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included: a cycle means two modules are one, or a shared type lives in the wrong place.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'foundation-not-to-upper-layers',
      severity: 'error',
      comment: 'db/, integrations/, config.ts and logger.ts are the bottom layer: they are used by services, routes and jobs, and use none of them.',
      from: { path: '^(db/|integrations/|config\\.ts$|logger\\.ts$)' },
      to: { path: '^(services|routes|jobs)/' },
    },
    {
      name: 'services-not-to-routes-or-jobs',
      severity: 'error',
      comment: 'services/ hold the rules of the domain; HTTP (routes/) and queue handlers (jobs/) call them, never the other way round.',
      from: { path: '^services/' },
      to: { path: '^(routes|jobs)/' },
    },
    {
      name: 'routes-not-to-jobs-or-worker',
      severity: 'error',
      comment: 'routes/ run in the web process; the job handlers and worker.ts run in the worker process. Routes enqueue through services.',
      from: { path: '^routes/' },
      to: { path: '^(jobs/|worker\\.ts$)' },
    },
    {
      name: 'domain-through-its-index',
      severity: 'error',
      comment:
        'services/ is grouped by domain (docs/architecture.md): from outside a domain folder, code imports the domain by its index.ts, what the domain offers the rest; the files behind it are its own business.',
      from: { path: '^(?!services/([^/]+)/)' },
      to: { path: '^services/([^/]+)/.+', pathNot: ['^services/[^/]+/index\\.ts$'] },
    },
    {
      name: 'domain-to-domain-through-index',
      severity: 'error',
      comment:
        'A domain imports another domain only by its index.ts; besides, calls/outcomes.ts, the outcome classes that the domains below the loop (orders, deliveries, team) read too.',
      from: { path: '^services/([^/]+)/' },
      to: { path: '^services/([^/]+)/.+', pathNot: ['^services/$1/', '^services/[^/]+/index\\.ts$', '^services/calls/outcomes\\.ts$'] },
    },
    {
      name: 'calls-outcomes-imports-nothing',
      severity: 'error',
      comment: 'calls/outcomes.ts is read by domains that calls/ itself imports: one import in it could close a cycle through them.',
      from: { path: '^services/calls/outcomes\\.ts$' },
      to: {},
    },
    {
      name: 'shared-not-to-domains',
      severity: 'error',
      comment: 'services/shared/ holds what every domain uses (errors, validation, messages, locks, …): it imports no domain.',
      from: { path: '^services/shared/' },
      to: { path: '^services/', pathNot: '^services/shared/' },
    },
    {
      name: 'migrations-import-nothing-live',
      severity: 'error',
      comment:
        'A migration means the same forever: it imports only knex (for its types) and node builtins, never code that lives on (db/order-fields.ts, db/jobs.ts, services/…). What it runs is a literal copy (docs/architecture.md).',
      from: { path: '^db/migrations/' },
      to: { dependencyTypesNot: ['core'], pathNot: '(^|/)node_modules/knex/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing: a typo or a file that moved.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'production-not-to-dev-deps',
      severity: 'error',
      comment: 'The web and worker processes run from an install without devDependencies; they must not import one.',
      from: { path: '^(app|server|worker|config|logger|knexfile)\\.ts$|^(db|integrations|services|routes|jobs|openapi|bin)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|public|views|\\.data|bench/tmp|test-artifacts)/|^\\.dependency-cruiser\\.cjs$' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
