import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { redisTestsRun, startRedis, type RedisServer } from '../support/redis-server.js';
import { pipelineInProcess, TestInterrupts } from '../support/cli.js';
import { systemClock } from '../../src/clock.js';
import { ManualClock } from '../support/manual-clock.js';

/** Markers that must appear nowhere: the Redis password, and a token the recipe does not pass. */
const REDIS_PASSWORD = 'redis-pw-marker-5f1c';
const UNPASSED_TOKEN = 'unpassed-token-marker-9a2e';
const PASSED_VALUE = 'passed-value-7b3d';

let gateway: LocalGateway;
/** The gateway's and the commands' time: polls and task latencies take no real time. */
const clock = new ManualClock();
let redis: RedisServer;
let work: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, latencyScale: 0.01, latencyJitter: 0, seed: 3 });
  if (redisTestsRun) redis = await startRedis(REDIS_PASSWORD);
  work = await mkdtemp(join(tmpdir(), 'pipeline-credentials-'));
});
afterAll(async () => {
  await gateway.close();
  await redis?.stop();
  await rm(work, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  PIPELINE_HOME: join(work, 'home'),
  PIPELINE_BASE_URL: gateway.baseUrl,
  PIPELINE_TOOL_URL: gateway.toolUrl,
  PIPELINE_LLM_URL: gateway.llmUrl,
  PIPELINE_SCHEMA_URL: gateway.schemaUrl,
  PIPELINE_API_KEY: gateway.apiKey,
  MY_TOKEN: UNPASSED_TOKEN,
  PASSED_VAR: PASSED_VALUE,
  ...extra,
});
const pipeline = (args: string[], extra: Record<string, string> = {}) =>
  pipelineInProcess(args, { env: env(extra), cwd: work, clock, gateway });

/** Every file under `dir`, with its text. */
function filesUnder(dir: string): Array<[string, string]> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => [path, readFileSync(path, 'latin1')]);
}

describe.skipIf(!redisTestsRun)("a run: step's environment", () => {
  it("holds none of the tool's credentials, nor what the recipe does not pass; they reach no file and no output", async () => {
    const recipe = join(work, 'env.yaml');
    await writeFile(
      recipe,
      [
        'version: 1',
        'name: env-check',
        'settings:',
        '  pass_env: [PASSED_VAR]',
        'steps:',
        '  text:',
        '    run: env',
        '  argv:',
        '    run: [sh, -c, env]',
        '  image:',
        '    uses: vendor-a/vendor-a-v3-t2i',
        '    with: { prompt: "a kite, ${{ steps.text.outputs.exit_code }}" }',
        'outputs:',
        '  text: ${{ steps.text.outputs.stdout }}',
        '  argv: ${{ steps.argv.outputs.stdout }}',
        '',
      ].join('\n'),
    );
    const run = await pipeline(['run', recipe, '--json'], { PIPELINE_REDIS_URL: redis.url });
    expect(run.exitCode, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    const [text, argv] = [report.outputs.text as string, report.outputs.argv as string];
    for (const seen of [text, argv]) {
      expect(seen).toMatch(/^PATH=/m);
      expect(seen).toContain(`PASSED_VAR=${PASSED_VALUE}`);
      expect(seen).not.toMatch(/^(PIPELINE_API_KEY|PIPELINE_REDIS_URL|MY_TOKEN|PIPELINE_HOME)=/m);
    }
    const markers = [gateway.apiKey, REDIS_PASSWORD, UNPASSED_TOKEN];
    const written: Array<[string, string]> = [
      ...filesUnder(join(work, 'home')),
      ['stdout', run.stdout],
      ['stderr', run.stderr],
    ];
    expect(written.map(([path]) => path)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/journal\.jsonl$/),
        expect.stringMatching(/run\.json$/),
        expect.stringMatching(/report\.html$/),
      ]),
    );
    for (const [path, content] of written)
      for (const marker of markers) expect(content.includes(marker), `${marker} in ${path}`).toBe(false);
  });

  it('refuses, before anything runs, a recipe that reads a credential or passes one', async () => {
    const recipe = join(work, 'reads.yaml');
    await writeFile(
      recipe,
      [
        'version: 1',
        'name: reads',
        'settings:',
        '  pass_env: [HOME, PIPELINE_REDIS_URL]',
        'steps:',
        '  show:',
        '    run: echo "${{ env.PIPELINE_REDIS_URL }}"',
        '',
      ].join('\n'),
    );
    const validated = await pipeline(['validate', recipe], { PIPELINE_REDIS_URL: redis.url });
    expect(validated.exitCode).toBe(2);
    expect(validated.stderr).toContain(
      "reads.yaml:4:20: error: settings.pass_env: PIPELINE_REDIS_URL is a credential of pipeline's own and never reaches a command",
    );
    expect(validated.stderr).toContain(
      "reads.yaml:7:16: error: env.PIPELINE_REDIS_URL is a credential of pipeline's own and cannot be used in a recipe",
    );
    expect(validated.stderr).not.toContain(REDIS_PASSWORD);
  });
});

describe.skipIf(!redisTestsRun)('a Redis password given as the URL’s password query parameter', () => {
  it('reaches no output: the resume hint puts REDIS_PASSWORD in its place, the failure shows ***', async () => {
    const recipe = join(work, 'slow.yaml');
    await writeFile(recipe, 'version: 1\nname: slow\nsteps:\n  wait:\n    run: sleep 20\n');
    // ioredis reads the password from the query too, so a user may give it there.
    const { port } = new URL(redis.url);
    const queried = `redis://127.0.0.1:${port}/?password=${REDIS_PASSWORD}`;
    // Stopped with Ctrl-C once its command runs: the run prints how to resume it.
    const interrupts = new TestInterrupts();
    const pressed = (async () => {
      while (!interrupts.listened()) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, 200));
      interrupts.press();
    })();
    const run = await pipelineInProcess(['run', recipe, '--redis', queried], {
      env: env(),
      cwd: work,
      clock: systemClock,
      interrupts,
    });
    await pressed;
    expect(run.exitCode, run.stderr).toBe(130);
    expect(run.stderr).toContain(
      `resume ${run.stderr.match(/resume (\S+)/)?.[1]} --redis 'redis://127.0.0.1:${port}/?password=REDIS_PASSWORD'  # put the Redis password in place of REDIS_PASSWORD`,
    );
    const wrong = await pipeline([
      'run',
      recipe,
      '--redis',
      `redis://127.0.0.1:${port}/?password=not-${REDIS_PASSWORD}`,
    ]);
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toContain(`Redis at redis://127.0.0.1:${port}/?password=*** refused the password (`);
    expect(wrong.stderr).toContain('check the password in the URL');
    // Redis runs: telling the user to start it would send them the wrong way.
    expect(wrong.stderr).not.toContain('start Redis');
    for (const output of [run, wrong]) expect(`${output.stdout}${output.stderr}`).not.toContain(REDIS_PASSWORD);
  });
});
