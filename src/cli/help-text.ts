import type { Command } from 'commander';

/** Examples of each command, by its path (`runs show`); shown under its `--help`. */
const EXAMPLES: Record<string, string[]> = {
  run: [
    'npx pipeline run recipes/launch-kit.yaml --local',
    'npx pipeline run recipes/launch-kit.yaml --set topic="cargo bikes" --out build/',
    'npx pipeline run recipes/batch-thumbnails.yaml --batch recipes/data/thumbnails.csv --local --json',
  ],
  resume: [
    'npx pipeline resume latest --local',
    'npx pipeline resume 20250114-093000-launch-kit-1a2b',
    'npx pipeline resume 2025011 --resubmit-unknown',
  ],
  validate: [
    'npx pipeline validate recipes/launch-kit.yaml',
    'npx pipeline validate recipes/launch-kit.yaml --set count=3 --json',
  ],
  plan: [
    'npx pipeline plan recipes/launch-kit.yaml',
    'npx pipeline plan recipes/batch-thumbnails.yaml --batch recipes/data/thumbnails.csv',
  ],
  runs: ['npx pipeline runs list', 'npx pipeline runs show latest'],
  'runs list': ['npx pipeline runs list', 'npx pipeline runs list --json | head -c 2000'],
  'runs show': ['npx pipeline runs show latest', 'npx pipeline runs show 20250114-0930 --json'],
  gateway: ['npx pipeline gateway serve --port 8787'],
  'gateway serve': ['npx pipeline gateway serve --port 8787', 'npx pipeline gateway serve --port 0   # any free port'],
  account: ['npx pipeline account', 'npx pipeline account --local --json'],
  models: ['npx pipeline models list', 'npx pipeline models schema vendor-a/vendor-a-v3-t2i'],
  'models list': ['npx pipeline models list --json'],
  'models schema': ['npx pipeline models schema vendor-a/vendor-a-v3-t2i'],
  files: ['npx pipeline files upload recipes/assets/logo.png', 'npx pipeline files list'],
  'files upload': ['npx pipeline files upload recipes/assets/logo.png recipes/assets/ride.mp4'],
  'files list': ['npx pipeline files list --json'],
  'files rm': ['npx pipeline files rm FILE_ID'],
  task: ['npx pipeline task get TASK_ID', 'npx pipeline task wait TASK_ID --download build/'],
  'task get': ['npx pipeline task get TASK_ID --json'],
  'task wait': ['npx pipeline task wait TASK_ID --download build/'],
  cache: ['npx pipeline cache list', 'npx pipeline cache prune --older-than 7d'],
  'cache list': ['npx pipeline cache list --json'],
  'cache prune': ['npx pipeline cache prune --older-than 7d'],
  'cache clear': ['npx pipeline cache clear'],
};

/** What the exit codes mean; a run and a resume also end 130 when stopped. */
function exitCodes(path: string): string[] {
  const codes = [
    '  0    it worked',
    '  1    it failed: a step failed or was cancelled, or the gateway refused or could not be reached',
    '  2    a usage error: a bad flag or argument, or a recipe with errors (nothing was sent)',
  ];
  if (path === 'run' || path === 'resume')
    codes.push('  130  stopped by Ctrl-C (or SIGTERM); resume it with pipeline resume RUN_ID');
  return codes;
}

const ENVIRONMENT: Record<string, string[]> = {
  run: [
    '  PIPELINE_HOME      where runs, logs and caches are kept (default: .pipeline in the working directory)',
    '  PIPELINE_API_KEY   the gateway key (not needed with --local)',
    '  PIPELINE_BASE_URL  the media API base, ending in /api/v1 (not needed with --local)',
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
