// action.yml read as text and YAML: what no run of it would show. Inputs reach shell scripts only
// through the environment (a `${{ }}` inside a script is pasted into it before bash reads it: an
// input with a quote would become code), the API key travels only as INPUT_API_KEY, and the
// README's tables name every input and output the action declares.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repo } from '../support/action-checkout.js';

interface Step {
  name?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}
const action = parse(readFileSync(join(repo, 'action.yml'), 'utf8')) as {
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
  runs: { using: string; steps: Step[] };
};
const steps = action.runs.steps;
const readme = readFileSync(join(repo, 'README.md'), 'utf8');

describe('action.yml', () => {
  it('is a composite action whose scripts contain no expression', () => {
    expect(action.runs.using).toBe('composite');
    const scripts = steps.filter((step) => step.run !== undefined);
    expect(scripts.length).toBeGreaterThan(3);
    for (const step of scripts) expect(step.run, step.name).not.toContain('${{');
  });

  it('passes the API key only in the environment of the step that runs the recipe, as INPUT_API_KEY', () => {
    const mentions = steps.flatMap((step) =>
      Object.entries({ ...step.env, ...step.with })
        .filter(([, value]) => String(value).includes('inputs.api-key'))
        .map(([name]) => `${step.name}: ${name}`),
    );
    expect(mentions).toEqual(['Run the recipe: INPUT_API_KEY']);
    const script = readFileSync(join(repo, 'action', 'run.sh'), 'utf8');
    // Exported under the tool's name, and gone from the environment before node starts.
    expect(script).toContain('export PIPELINE_API_KEY="$INPUT_API_KEY"');
    expect(script).toContain('unset INPUT_API_KEY');
    expect(script).not.toMatch(/--api-key/);
  });

  it('never runs npx: it runs the build in its own folder', () => {
    const scripts = [
      ...steps.map((step) => step.run ?? ''),
      ...['run.sh', 'setup.sh', 'tool-key.sh'].map((f) => readFileSync(join(repo, 'action', f), 'utf8')),
    ].join('\n');
    expect(scripts).not.toMatch(/\bnpx\b/);
    expect(scripts).toContain('node "$GITHUB_ACTION_PATH/dist/cli/main.js"');
  });

  it("has every input and output in the README's tables", () => {
    const section = readme.slice(readme.indexOf('### With the GitHub Action'), readme.indexOf('### The job summary'));
    const rows = (header: string) =>
      [...section.slice(section.indexOf(`| ${header} |`)).matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]);
    expect(rows('input').slice(0, Object.keys(action.inputs).length)).toEqual(Object.keys(action.inputs));
    expect(rows('output').slice(0, Object.keys(action.outputs).length)).toEqual(Object.keys(action.outputs));
  });
});
