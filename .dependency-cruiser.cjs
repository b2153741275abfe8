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
const CLIENT_SIDE = '^src/(gateway|scheduler|engine|store|recipe|expressions|cli|actions)/|^src/plan\\.ts$';
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
const UPPER_LAYERS = '^src/(cli|engine|scheduler|gateway|store|recipe|local-gateway|actions)/|^src/plan\\.ts$';

/**
 * An action (src/actions/<kind>/) is one folder, its parts split by layer so that each layer
 * loads only its own: `duration.ts` (base: read by the analyzer and the engine), `plan.ts` (the
 * analyzer's layer), `run.ts` (the engine's), `card.ts` (the report's). Each layer has its
 * registry (durations, planners, runners, cards) and its part's type (`*-part.ts`).
 */
const actionPart = (part, registry) => `^src/actions/([^/]+/${part}|${part}-part|${part}-kit|${registry})\\.ts$`;
const ACTION_DURATIONS = actionPart('duration', 'durations');
const ACTION_PLANS = actionPart('plan', 'planners');
const ACTION_RUNS = actionPart('run', 'runners');
const ACTION_CARDS = actionPart('card', 'cards');

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
      name: 'action-durations-are-base',
      comment: "An action's expected durations are read by the analyzer and the engine: they import only plan types.",
      severity: 'error',
      from: { path: ACTION_DURATIONS },
      to: { path: '^src/', pathNot: ['^src/plan\\.ts$', ACTION_DURATIONS, ...BASE] },
    },
    {
      name: 'action-plans-in-the-analyzer-layer',
      comment: "An action's plan part is the analyzer's: it knows nothing that runs a plan, nor the report.",
      severity: 'error',
      from: { path: ACTION_PLANS },
      to: { path: ['^src/(engine|scheduler|gateway|store|report|live|workers|cli)/', ACTION_RUNS, ACTION_CARDS] },
    },
    {
      name: 'action-runs-in-the-engine-layer',
      comment: "An action's run part is the engine's: it takes plans, not recipes, and knows no report.",
      severity: 'error',
      from: { path: ACTION_RUNS },
      to: { path: ['^src/(recipe|report|live|workers|cli)/', ACTION_PLANS, ACTION_CARDS] },
    },
    {
      name: 'action-cards-in-the-report-layer',
      comment: "An action's card only shows outputs: it runs and analyzes nothing.",
      severity: 'error',
      from: { path: ACTION_CARDS },
      to: { path: ['^src/(engine|scheduler|gateway|store|recipe|workers|cli)/', ACTION_PLANS, ACTION_RUNS] },
    },
    {
      name: 'analyzer-loads-no-action-runner',
      comment: "The analyzer reads actions' plan parts only: an action's runner or card would bring the engine or the report.",
      severity: 'error',
      from: { path: '^src/recipe/' },
      to: { path: [ACTION_RUNS, ACTION_CARDS] },
    },
    {
      name: 'engine-loads-no-action-planner',
      comment: "The engine reads actions' run parts only: their plan parts are the analyzer's, their cards the report's.",
      severity: 'error',
      from: { path: '^src/(engine|scheduler|gateway|store)/' },
      to: { path: [ACTION_PLANS, ACTION_CARDS] },
    },
    {
      name: 'whole-actions-for-contributors',
      comment:
        'src/actions/registry.ts loads every layer of every action: no layer may load it, or the analyzer would load ' +
        'the engine.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/actions/registry\\.ts$' },
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
