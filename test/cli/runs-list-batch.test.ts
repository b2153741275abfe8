import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTED_ROWS } from '../../src/store/summary.js';
import { batchJournal } from '../support/batch-journal.js';
import { pipelineInProcess } from '../support/cli.js';

let home: string;
const RUN = '20261125-120000-x-abcd';
const ROWS = LISTED_ROWS + 500;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'runs-list-batch-'));
  await mkdir(join(home, 'runs', RUN), { recursive: true });
  const events = batchJournal(ROWS, RUN);
  await writeFile(join(home, 'runs', RUN, 'journal.jsonl'), `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
});
afterAll(() => rm(home, { recursive: true, force: true }));

describe('runs list of a batch past the rows its summary lists', () => {
  it('counts every step and file, those it does not list too', async () => {
    const env = { PIPELINE_HOME: home };
    const json = await pipelineInProcess(['runs', 'list', '--json'], { env });
    expect(json.exitCode, json.stderr).toBe(0);
    // Every row but one (row 1,100 failed) made its file.
    expect(JSON.parse(json.stdout)[0]).toMatchObject({ run_id: RUN, files: ROWS - 1 });
    const table = await pipelineInProcess(['runs', 'list'], { env });
    const line = table.stdout.split('\n').find((l) => l.startsWith(RUN))!;
    expect(line).toMatch(new RegExp(`\\s${ROWS - 1}/${ROWS}\\s.*\\s${ROWS - 1}$`));
  });
});
