import type { Command } from 'commander';

/** Examples of each command, by its path (`runs show`); shown under its `--help`. */
const EXAMPLES: Record<string, string[]> = {
  run: [
    'npx media-pipeline run recipes/launch-kit.yaml --local',
    'npx media-pipeline run recipes/launch-kit.yaml --set topic="cargo bikes" --out build/',
    'npx media-pipeline run recipes/batch-thumbnails.yaml --batch recipes/data/thumbnails.csv --local --json',
  ],
  resume: [
    'npx media-pipeline resume latest --local',
    'npx media-pipeline resume 20250114-093000-launch-kit-1a2b',
    'npx media-pipeline resume 2025011 --resubmit-unknown',
  ],
  validate: [
    'npx media-pipeline validate recipes/launch-kit.yaml',
    'npx media-pipeline validate recipes/launch-kit.yaml --set count=3 --json',
  ],
  plan: [
    'npx media-pipeline plan recipes/launch-kit.yaml',
    'npx media-pipeline plan recipes/batch-thumbnails.yaml --batch recipes/data/thumbnails.csv',
  ],
  runs: ['npx media-pipeline runs list', 'npx media-pipeline runs show latest'],
  'runs list': ['npx media-pipeline runs list', 'npx media-pipeline runs list --json | head -c 2000'],
  'runs show': ['npx media-pipeline runs show latest', 'npx media-pipeline runs show 20250114-0930 --json'],
  report: [
    'npx media-pipeline report latest --open',
    'npx media-pipeline report 20250114-0930 --out build/report.html',
  ],
  init: ['npx media-pipeline init', 'npx media-pipeline init --dir game --force'],
  completion: ['source <(pipeline completion bash)', 'pipeline completion fish | source'],
  gateway: ['npx media-pipeline gateway serve --port 8787'],
  'gateway serve': [
    'npx media-pipeline gateway serve --port 8787',
    'npx media-pipeline gateway serve --port 0   # any free port',
  ],
  account: ['npx media-pipeline account', 'npx media-pipeline account --local --json'],
  models: ['npx media-pipeline models list', 'npx media-pipeline models schema vendor-a/vendor-a-v3-t2i'],
  'models list': ['npx media-pipeline models list --json'],
  'models schema': ['npx media-pipeline models schema vendor-a/vendor-a-v3-t2i'],
  files: ['npx media-pipeline files upload recipes/assets/logo.png', 'npx media-pipeline files list'],
  'files upload': ['npx media-pipeline files upload recipes/assets/logo.png recipes/assets/ride.mp4'],
  'files list': ['npx media-pipeline files list --json'],
  'files rm': ['npx media-pipeline files rm FILE_ID'],
  task: ['npx media-pipeline task get TASK_ID', 'npx media-pipeline task wait TASK_ID --download build/'],
  'task get': ['npx media-pipeline task get TASK_ID --json'],
  'task wait': ['npx media-pipeline task wait TASK_ID --download build/'],
  cache: ['npx media-pipeline cache list', 'npx media-pipeline cache prune --older-than 7d'],
  'cache list': ['npx media-pipeline cache list --json', 'npx media-pipeline cache list --remote'],
  'cache prune': [
    'npx media-pipeline cache prune --older-than 7d',
    'PIPELINE_CACHE_REMOTE=s3://bucket/prefix npx media-pipeline cache prune --remote --older-than 30d',
  ],
  'cache clear': ['npx media-pipeline cache clear'],
  worker: [
    'npx media-pipeline worker --redis redis://:PASSWORD@redis.internal:6379 --concurrency 4',
    'npx media-pipeline run recipe.yaml --workers redis://:PASSWORD@redis.internal:6379   # the coordinator',
  ],
};

/** What exit code 1 means for a command. */
function failureOf(path: string): string {
  if (path === 'run' || path === 'resume')
    return 'it failed: a step failed or was cancelled, or the gateway refused or could not be reached';
  if (path === 'task wait') return 'the task failed, or the gateway refused or could not be reached';
  if (path === 'cache list' || path === 'cache prune')
    return 'the remote cache could not be read or written (the message says why)';
  // These read and write this machine's files only.
  if (['cache', 'cache clear', 'runs', 'runs list', 'runs show', 'report', 'init', 'completion'].includes(path))
    return 'it failed (the message says why)';
  if (path === 'validate' || path === 'plan')
    return "it failed for a reason that is not the recipe's (the message says why)";
  return 'the gateway refused or could not be reached (the message says which)';
}

/** What the exit codes mean; a run and a resume also end 130 when stopped. */
function exitCodes(path: string): string[] {
  if (path === 'gateway serve')
    return [
      '  0    stopped by SIGINT or SIGTERM, after serving',
      '  1    it could not start: the port is taken, or the data folder cannot be used',
      '  2    a usage error: a bad flag or argument (nothing was started)',
    ];
  // Only these read a recipe, whose errors are usage errors too.
  const recipe = ['run', 'resume', 'validate', 'plan', 'account'].includes(path);
  const codes = [
    path === 'worker' ? '  0    stopped by SIGINT or SIGTERM, after the jobs in hand' : '  0    it worked',
    `  1    ${failureOf(path)}`,
    recipe
      ? '  2    a usage error: a bad flag or argument, or a recipe with errors (nothing was sent)'
      : path === 'worker'
        ? '  2    a usage error, or Redis could not be reached or refused the password (nothing was taken)'
        : '  2    a usage error: a bad flag or argument (nothing was sent)',
  ];
  if (path === 'run' || path === 'resume')
    codes.push(
      "  3    stopped for money: the spending cap (--max-cost) or the team's balance (a 402) stopped items;",
      '       resume RUN_ID --max-cost USD (or after a recharge) runs exactly those',
      '  130  stopped by Ctrl-C (or SIGTERM); resume it with pipeline resume RUN_ID',
    );
  return codes;
}

const ENVIRONMENT: Record<string, string[]> = {
  run: [
    '  PIPELINE_HOME      where runs, logs and caches are kept (default: .pipeline in the working directory)',
    '  PIPELINE_API_KEY   the gateway key (not needed with --local)',
    '  PIPELINE_BASE_URL  the media API base, ending in /api/v1 (not needed with --local)',
    '  PIPELINE_CACHE_REMOTE       s3://bucket/prefix: a step cache shared by machines (keys: the AWS_* variables)',
    '  PIPELINE_CACHE_SIGNING_KEY  sign the remote cache entries written, and refuse unsigned ones',
  ],
};
ENVIRONMENT.resume = ENVIRONMENT.run!;

function pathOf(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/** Adds examples, the environment and the exit codes under every command's `--help`. */
export function addHelpTexts(program: Command): void {
  const visit = (command: Command) => {
    const path = pathOf(command);
    const examples = EXAMPLES[path];
    const lines: string[] = [];
    if (examples) lines.push('', 'Examples:', ...examples.map((e) => `  ${e}`));
    if (ENVIRONMENT[path]) lines.push('', 'Environment:', ...ENVIRONMENT[path]);
    if (path) lines.push('', 'Exit codes:', ...exitCodes(path));
    if (lines.length > 0) command.addHelpText('after', lines.join('\n'));
    for (const sub of command.commands) visit(sub);
  };
  visit(program);
}
