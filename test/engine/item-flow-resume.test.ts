import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournal, type JournalEvent } from '../../src/store/journal.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const ITEMS = 8;
const RECIPE = `version: 1
name: chain
settings: { concurrency: 3 }
steps:
  t2i:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: [${Array.from({ length: ITEMS }, (_, i) => `"colour ${i}"`).join(', ')}]
    with: { prompt: "a \${{ item }} background" }
  edit:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ steps.t2i.outputs[*].images[0].url }}
    with: { prompt: add a badge, image: ["\${{ item }}"], size: 1024x1024 }
`;

let home: string;
let gateway: ResultPromise;
let urls: Record<string, string>;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-item-resume-'));
  await writeFile(join(home, 'chain.yaml'), RECIPE);
  gateway = execa('node', [cli, 'gateway', 'serve', '--port', '0', '--latency-scale', '0.3', '--seed', '4'], {
    reject: false,
  });
  urls = JSON.parse(
    await new Promise<string>((resolve) =>
      gateway.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().split('\n')[0]!)),
    ),
  );
});
afterAll(async () => {
  gateway.kill('SIGTERM');
  await gateway;
  await rm(home, { recursive: true, force: true });
});

const env = () => ({
  PIPELINE_HOME: home,
  PIPELINE_BASE_URL: urls.base_url!,
  PIPELINE_API_KEY: urls.api_key!,
  CI: 'true',
});
const journalOf = (runId: string) => readJournal(join(home, 'runs', runId, 'journal.jsonl'));
const finished = (events: JournalEvent[], step: string) =>
  events.filter((e) => e.type === 'item-finished' && e.step === step).map((e) => (e as { index: number }).index);

async function waitForJournal(ready: (events: JournalEvent[]) => boolean): Promise<string> {
  for (let i = 0; i < 800; i++) {
    const id = existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs'))[0] : undefined;
    if (id && existsSync(join(home, 'runs', id, 'journal.jsonl')) && ready(journalOf(id))) return id;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the run never reached the expected state');
}

describe('a run of item chains stopped mid-way, then resumed', () => {
  it('finishes every unfinished chain, and runs no finished item again', async () => {
    const run = execa('node', [cli, 'run', join(home, 'chain.yaml'), '--no-cache'], { reject: false, env: env() });
    // Stopped once an edit is done: chains are then at every stage, some done, some not begun.
    const runId = await waitForJournal((events) => finished(events, 'edit').length >= 1);
    run.kill('SIGINT');
    expect((await run).exitCode).toBe(130);
    const atStop = journalOf(runId);
    const editsDone = finished(atStop, 'edit');
    expect(editsDone.length).toBeLessThan(ITEMS);

    const resumed = await execa('node', [cli, 'resume', runId, '--json'], { reject: false, env: env() });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).files).toHaveLength(2 * ITEMS);
    const events = journalOf(runId);
    // Each item finished once, over both sessions: the resume ran only what was left of each chain.
    for (const step of ['t2i', 'edit'])
      expect(finished(events, step).sort((a, b) => a - b)).toEqual([...Array(ITEMS).keys()]);
    const taskIds = events.filter((e) => e.type === 'task-submitted').map((e) => (e as { task_id: string }).task_id);
    expect(new Set(taskIds).size).toBe(taskIds.length);
    expect(taskIds).toHaveLength(2 * ITEMS);
  });
});
