/**
 * The import graph's one-way flow, checked by test/architecture/import-graph.test.ts (and usable as
 * `npx depcruise src test --config .dependency-cruiser.cjs`).
 *
 * A recipe flows YAML → analyzer (src/recipe) → Plan (src/plan.ts, types) → engine (src/engine) →
 * scheduler (src/scheduler) → gateway client (src/gateway) → journal (src/store). The session
 * (src/session) builds a run from typed options: connection, budget, cache, journal; the command line
 * (src/cli) parses flags into those options and prints, and nothing imports it. The library entry
 * (src/index.ts) exports the session. The local gateway is the other side
 * of the wire: it shares only the bundled files under schemas/ (read through src/package-root.ts and
 * src/model-schemas/) with the client. Base modules sit at the bottom and import no layer above.
 *
 * Paths are relative to the folder cruised from, so the same rules run over the repository and over
 * the small fixture that proves they can fail.
 */
const CLIENT_SIDE = '^src/(gateway|scheduler|engine|store|recipe|expressions|cli)/|^src/plan\\.ts$';
const BASE = [
  '^src/clock\\.ts$',
  '^src/credentials\\.ts$',
  '^src/result\\.ts$',
  '^src/duration\\.ts$',
  '^src/format\\.ts$',
  '^src/expected-durations\\.ts$',
  '^src/package-root\\.ts$',
  '^src/expressions/',
  '^src/model-schemas/',
  '^src/files/',
  '^src/wire/',
];
const UPPER_LAYERS = '^src/(cli|engine|scheduler|gateway|store|recipe|local-gateway)/|^src/plan\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-import-of-cli',
      comment: 'The command line wires everything; nothing in src/ depends on it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'session-entered-from-the-cli-and-the-library',
      comment:
        'The session builds runs out of every layer; only the command line and the library entry (src/index.ts) ' +
        'use it, so no layer below can reach back up through it.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/cli/', '^src/session/', '^src/index\\.ts$'] },
      to: { path: '^src/session/' },
    },
    {
      name: 'tests-enter-the-cli-at-its-entry',
      comment:
        'Tests run the command line through its one entry point (runCli in src/cli/program.ts, the one main.ts ' +
        'runs) or as a process (dist/); no other module of src/cli.',
      severity: 'error',
      from: { path: '^test/' },
      to: { path: '^src/cli/', pathNot: '^src/cli/program\\.ts$' },
    },
    {
      name: 'local-gateway-shares-only-schemas',
      comment:
        'The local gateway imports nothing of the client side; bundled files come through package-root, ' +
        'the write-then-rename temp files through files/temp-files, and the request types generated from ' +
        'schemas/ through wire/.',
      severity: 'error',
      from: { path: '^src/local-gateway/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/local-gateway/',
          '^src/package-root\\.ts$',
          '^src/model-schemas/',
          '^src/files/temp-files\\.ts$',
          '^src/wire/',
        ],
      },
    },
    {
      name: 'client-side-imports-no-local-gateway',
      comment: 'Only the command line may start the local gateway; the client side talks to it over HTTP.',
      severity: 'error',
      from: { path: CLIENT_SIDE, pathNot: '^src/cli/' },
      to: { path: '^src/local-gateway/' },
    },
    {
      name: 'gateway-client-below-scheduler',
      comment: 'The gateway client knows no scheduler, engine, journal, recipe or plan.',
      severity: 'error',
      from: { path: '^src/gateway/' },
      to: { path: '^src/(scheduler|engine|store|recipe)/|^src/plan\\.ts$' },
    },
    {
      name: 'scheduler-below-engine',
      comment: 'The scheduler (the request budget) knows no engine, journal or recipe.',
      severity: 'error',
      from: { path: '^src/scheduler/' },
      to: { path: '^src/(engine|store|recipe)/' },
    },
    {
      name: 'report-and-live-view-read-only',
      comment: 'The HTML report and the live view read the run; nothing that runs one depends on them.',
      severity: 'error',
      from: { path: '^src/(engine|scheduler|gateway|store|recipe)/|^src/plan\\.ts$' },
      to: { path: '^src/(report|live)/' },
    },
    {
      name: 'recipe-above-execution',
      comment: 'The analyzer only produces a plan; it knows nothing that runs one.',
      severity: 'error',
      from: { path: '^src/recipe/' },
      to: { path: '^src/(engine|scheduler|gateway|store)/' },
    },
    {
      name: 'engine-takes-plans-not-recipes',
      comment: 'The engine runs a valid plan; it never looks at recipe text or the analyzer.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/recipe/' },
    },
    {
      name: 'plan-imports-only-base-types',
      comment: 'src/plan.ts is types only, built from base modules.',
      severity: 'error',
      from: { path: '^src/plan\\.ts$' },
      to: { pathNot: BASE },
    },
    {
      name: 'plan-imports-only-types',
      comment: 'src/plan.ts holds no code, so it imports no code.',
      severity: 'error',
      from: { path: '^src/plan\\.ts$' },
      to: { dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'base-modules-import-no-layer',
      comment: 'Base modules are shared by every layer, so they import none of them.',
      severity: 'error',
      from: { path: BASE },
      to: { path: UPPER_LAYERS },
    },
    {
      name: 'no-circular',
      comment: 'A cycle makes two modules one; split out what they share.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    // Type-only imports count: a type from a higher layer is still a back-edge.
    tsPreCompilationDeps: true,
    // No enhancedResolveOptions.extensionAlias: dependency-cruiser maps an import of `./x.js` to `./x.ts`
    // by itself, and the depcruise command refuses the option (its schema has no such property).
  },
};
