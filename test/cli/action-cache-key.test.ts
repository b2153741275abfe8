// action/setup.sh's step-cache key, run as the action runs it: the key must change whenever the
// run would read different bytes, or a job restores an older cache exactly, pays again for the
// same work and, the key being a hit, never saves what it made.
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { repo } from '../support/action-checkout.js';

const workspace = mkdtempSync(join(tmpdir(), 'action-key-'));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

mkdirSync(join(workspace, 'art'));
copyFileSync(join(repo, 'recipes', 'assets', 'logo.png'), join(workspace, 'art', 'logo.png'));
copyFileSync(join(repo, 'recipes', 'assets', 'logo.png'), join(workspace, 'art', 'logo-v2.png'));
writeFileSync(
  join(workspace, 'brand.yaml'),
  [
    'version: 1',
    'name: brand',
    'inputs:',
    '  logo: { type: file, default: ./art/logo.png }',
    '  title: { type: string, default: hello }',
    'steps:',
    '  edit:',
    '    uses: vendor-b/vendor-b-5.0-lite-edit',
    '    with: { prompt: "${{ inputs.title }}", image: ["${{ inputs.logo }}"], size: 1024x1024 }',
    '',
  ].join('\n'),
);
writeFileSync(join(workspace, 'rows.csv'), 'title\nspring\n');

/** The cache key setup.sh prints for these args. */
async function keyFor(args: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await execa('bash', [join(repo, 'action', 'setup.sh')], {
    env: {
      GITHUB_ACTION_PATH: repo,
      GITHUB_WORKSPACE: workspace,
      INPUT_RECIPE: 'brand.yaml',
      INPUT_ARGS: args,
      ...env,
    },
  });
  const line = stdout.split('\n').find((l) => l.startsWith('cache-key='));
  if (!line) throw new Error(`no cache-key in: ${stdout}`);
  return line;
}

describe("the action's cache key", () => {
  it('follows a file given in args with --set, in either spelling, and not the default it replaces', async () => {
    for (const args of ['--set logo=art/logo-v2.png --local', '--set=logo=art/logo-v2.png']) {
      const before = await keyFor(args);
      appendFileSync(join(workspace, 'art', 'logo-v2.png'), 'a new version');
      expect(await keyFor(args)).not.toBe(before);
    }
    // The default the --set replaced is not read: its change leaves the key as it was.
    const set = await keyFor('--set logo=art/logo-v2.png');
    appendFileSync(join(workspace, 'art', 'logo.png'), 'unread');
    expect(await keyFor('--set logo=art/logo-v2.png')).toBe(set);
  });

  it('follows the rows of a --batch file', async () => {
    const before = await keyFor('--batch rows.csv --max-cost 1');
    appendFileSync(join(workspace, 'rows.csv'), 'summer\n');
    expect(await keyFor('--batch rows.csv --max-cost 1')).not.toBe(before);
  });

  it('follows the gateway: a job on another gateway restores no exact hit, so it saves what it paid for', async () => {
    const staging = await keyFor('', { PIPELINE_BASE_URL: 'https://staging.example/api/v1' });
    expect(await keyFor('', { PIPELINE_BASE_URL: 'https://staging.example/api/v1' })).toBe(staging);
    expect(await keyFor('', { PIPELINE_BASE_URL: 'https://gateway.example/api/v1' })).not.toBe(staging);
    // The address is hashed, never printed: it may carry a password.
    expect(await keyFor('', { PIPELINE_BASE_URL: 'https://u:hunter2@gateway.example/api/v1' })).not.toContain(
      'hunter2',
    );
  });
});
