/**
 * Dependency rules of the source tree, checked by `npm run lint` (dependency-cruiser). What each rule
 * protects is explained in docs/architecture.md ("Dependency rules").
 */
const server = '^packages/server/src'
const features =
  '(activations|api-keys|customers|entitlements|events|idempotency|licenses|policies|products|protection|seat-sweep|tokens|usage|webhooks)'

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycle, type-only imports included: every module can be read and tested bottom-up.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'routes-only-from-composition',
      severity: 'error',
      comment:
        "A feature's routes/ is HTTP: only other route files of its feature, the composition root (app.ts) and tests import it. Services and adapters take their wire mappers from the feature folder.",
      from: {
        path: `${server}/`,
        pathNot: [`${server}/[^/]+/routes/`, `${server}/app\\.ts$`, '\\.test\\.ts$', `${server}/testing/`],
      },
      to: { path: `${server}/[^/]+/routes/` },
    },
    {
      name: 'routes-stay-in-their-feature',
      severity: 'error',
      comment: "A route file imports no other feature's routes/.",
      from: { path: `${server}/([^/]+)/routes/`, pathNot: '\\.test\\.ts$' },
      to: { path: `${server}/[^/]+/routes/`, pathNot: `${server}/$1/routes/` },
    },
    {
      name: 'storage-imports-no-feature',
      severity: 'error',
      comment:
        'storage/ is shared plumbing under every feature: it imports core/ and itself, never a feature.',
      from: { path: `${server}/storage/`, pathNot: '\\.test\\.ts$' },
      to: { path: `${server}/${features}/` },
    },
    {
      name: 'core-imports-no-framework',
      severity: 'error',
      comment:
        "core/ is the domain's shared kernel: no HTTP framework, no SQL builder, no driver, no feature.",
      from: { path: `${server}/core/`, pathNot: '\\.test\\.ts$' },
      to: {
        path: [
          'node_modules/(fastify|@fastify/|kysely|pg|pg-[a-z-]+|better-sqlite3|ioredis)/',
          `${server}/${features}/`,
          `${server}/(http|storage)/`,
        ],
      },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'Every relative import resolves to a file (virtual: modules are made by a Vite plugin).',
      from: {},
      to: { couldNotResolve: true, dependencyTypesNot: ['core', 'npm'], pathNot: '^virtual:' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^packages/[^/]+/(dist|dist-[a-z-]+)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.depcruise.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.d.ts'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
}
