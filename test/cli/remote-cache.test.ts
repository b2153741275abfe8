import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../src/cache/s3-object-store.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';
import { startS3Server, type S3Server } from '../support/s3-server.js';

const SUBMIT = 'POST /api/v1/{provider}/{model_id}';
/** The reads of the gateway check before a run (the key, and the balance the spend checks use). */
const PREFLIGHT = ['GET /api/v1/apikey/validate', 'GET /api/v1/team/balance'];

let gateway: LocalGateway;
/** The gateway's and every run's: polls and task latencies take no real time. */
const clock = new ManualClock();
let s3: S3Server;
let work: string;
/** s3://steps/<a prefix of this test's own> */
let remote: string;
let prefix: string;

beforeAll(async () => {
  [gateway, s3] = await Promise.all([
    startLocalGateway({ clock, latencyScale: 0.01, latencyJitter: 0, seed: 9 }),
    startS3Server(),
  ]);
});
afterAll(async () => {
  await gateway.close();
  await s3.close();
});
beforeEach(async (context) => {
  work = await mkdtemp(join(tmpdir(), 'pipeline-remote-cache-'));
  prefix = `ci/${context.task.id}`;
  remote = `s3://${s3.bucket}/${prefix}`;
  context.onTestFinished(() => rm(work, { recursive: true, force: true }));
});

/**
 * A "machine": a checkout of the recipe and its assets at a path of its own, its own pipeline home
 * and so its own local cache folder. Only the bucket is shared.
 */
function machine(name: string, extra: Record<string, string> = {}) {
  const root = join(work, name);
  cpSync('recipes/ci-assets.yaml', join(root, 'recipes', 'ci-assets.yaml'));
  cpSync('recipes/assets', join(root, 'recipes', 'assets'), { recursive: true });
  const env = (more: Record<string, string>) => ({
    PIPELINE_HOME: join(root, 'home'),
    PIPELINE_BASE_URL: gateway.baseUrl,
    PIPELINE_TOOL_URL: gateway.toolUrl,
    PIPELINE_LLM_URL: gateway.llmUrl,
    PIPELINE_SCHEMA_URL: gateway.schemaUrl,
    PIPELINE_API_KEY: gateway.apiKey,
    CI: 'true',
    // The manifest step runs node.
    PATH: process.env.PATH ?? '',
    ...s3.env,
    ...extra,
    ...more,
  });
  const pipeline = (args: string[], more: Record<string, string> = {}) =>
    pipelineInProcess(args, { env: env(more), cwd: root, clock, gateway });
  /** Runs the recipe, and counts the gateway requests it made by route. */
  const build = async (args: string[] = [], more: Record<string, string> = {}) => {
    const before = gateway.stats().requests.by_route;
    const result = await pipeline(['run', join(root, 'recipes', 'ci-assets.yaml'), '--json', ...args], more);
    await gateway.settle();
    const made: Record<string, number> = {};
    for (const [route, count] of Object.entries(gateway.stats().requests.by_route))
      if (count !== (before[route] ?? 0)) made[route] = count - (before[route] ?? 0);
    for (const route of PREFLIGHT) if (made[route] === 1) delete made[route];
    const report = result.exitCode === 0 ? JSON.parse(result.stdout) : undefined;
    const warnings = result.stderr.split('\n').filter((line) => line.startsWith('⚠'));
    return { result, made, submitted: made[SUBMIT] ?? 0, report, warnings };
  };
  return { root, pipeline, build };
}

const bucket = () => new S3ObjectStore({ bucket: s3.bucket, prefix }, s3.env);
const objects = async () => (await bucket().list('')).map((o) => o.name).sort();
const bytesOf = (dir: string) =>
  Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name)).toString('base64')]),
  );

describe('a remote step cache shared by two machines', () => {
  it('the second machine makes no request for what the first built, and keeps it locally', async () => {
    const first = machine('a');
    const cold = await first.build(['--cache-remote', remote]);
    expect(cold.result.exitCode, cold.result.stderr).toBe(0);
    expect(cold.submitted).toBe(4);
    expect(cold.warnings).toEqual([]);
    expect(cold.result.stderr).toContain(`step cache: ${remote} behind the local cache`);
    const stored = await objects();
    expect(stored.filter((name) => name.startsWith('entries/'))).toHaveLength(4);
    expect(stored.filter((name) => name.startsWith('blobs/')).length).toBeGreaterThanOrEqual(4);

    // Another checkout path, another home, another cache folder; the remote named by the variable.
    const second = machine('b', { PIPELINE_CACHE_REMOTE: remote });
    // Its plan counts what the remote holds (entries read, no file downloaded), and so does the run's money check.
    const plan = async (args: string[] = []) => {
      const planned = await second.pipeline([
        'plan',
        join(second.root, 'recipes', 'ci-assets.yaml'),
        '--json',
        ...args,
      ]);
      expect(planned.exitCode, planned.stderr).toBe(0);
      return JSON.parse(planned.stdout).totals;
    };
    expect(await plan()).toMatchObject({ cached: 4, cost: { usd: 0, lower_bound: false } });
    expect((await plan(['--no-cache-remote'])).cached).toBe(0);
    expect(existsSync(join(second.root, 'home', 'cache', 'blobs'))).toBe(false);
    const warm = await second.build();
    expect(warm.result.exitCode, warm.result.stderr).toBe(0);
    expect(warm.made).toEqual({});
    expect(warm.warnings).toEqual([]);
    // The SDK's notice about its future Node versions is no business of the run's.
    expect(warm.result.stderr).not.toMatch(/NodeVersionSupportWarning|ExperimentalWarning/);
    expect(warm.report.cache).toEqual({ enabled: true, hits: 4, misses: 0, tasks_saved: 4, requests_saved: 12 });
    expect(bytesOf(warm.report.outputs_dir)).toEqual(bytesOf(cold.report.outputs_dir));
    // What it fetched is in its local tier: without the remote, still no request.
    const local = JSON.parse((await second.pipeline(['cache', 'list', '--json'])).stdout);
    expect(local.entries).toHaveLength(4);
    const offline = await second.build(['--no-cache-remote']);
    expect(offline.made).toEqual({});
    expect(offline.result.stderr).not.toContain('step cache: s3://');

    const listed = await second.pipeline(['cache', 'list', '--remote', '--json']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ remote, entries: expect.any(Array) });
    expect(
      JSON.parse(listed.stdout)
        .entries.map((e: { key: string }) => e.key)
        .sort(),
    ).toEqual(local.entries.map((e: { key: string }) => e.key).sort());
  });

  it('a blob whose bytes were changed in the bucket is a miss with one warning, never an output', async () => {
    await machine('a').build(['--cache-remote', remote]);
    const blob = (await objects()).find((name) => name.startsWith('blobs/'))!;
    await bucket().replace(blob, { text: 'not the image that was stored' });
    const second = await machine('b').build(['--cache-remote', remote]);
    expect(second.result.exitCode, second.result.stderr).toBe(0);
    expect(second.warnings).toEqual([
      `⚠ ${remote}/${blob}: its bytes do not hash to its name (changed in the bucket); running the step instead`,
    ]);
    expect(second.submitted).toBeGreaterThanOrEqual(1);
    for (const name of readdirSync(second.report.outputs_dir))
      expect(readFileSync(join(second.report.outputs_dir, name), 'utf8')).not.toContain('not the image');
    // The machine that paid for those bytes again put them back: a third machine gets every item.
    const third = await machine('c').build(['--cache-remote', remote]);
    expect(third.made).toEqual({});
    expect(third.warnings).toEqual([]);
  });

  it('read-only mode writes nothing, and still reads', async () => {
    const pr = await machine('pr').build(['--cache-remote', remote, '--cache-remote-read-only']);
    expect(pr.result.exitCode, pr.result.stderr).toBe(0);
    expect(pr.result.stderr).toContain(`step cache: ${remote} behind the local cache (read-only)`);
    expect(await objects()).toEqual([]);
    await machine('main').build(['--cache-remote', remote]);
    const stored = await objects();
    const pr2 = await machine('pr2', { PIPELINE_CACHE_REMOTE_READ_ONLY: 'true' }).build(['--cache-remote', remote]);
    expect(pr2.made).toEqual({});
    expect(await objects()).toEqual(stored);
  });

  it('refuses entries with a wrong signature, and no key reaches an output, a journal or a message', async () => {
    const signer = { PIPELINE_CACHE_SIGNING_KEY: 'the-right-signing-key-0123456789' };
    const first = await machine('a', signer).build(['--cache-remote', remote]);
    expect(first.result.exitCode, first.result.stderr).toBe(0);
    const forger = { PIPELINE_CACHE_SIGNING_KEY: 'a-wrong-signing-key-9876543210' };
    const refused = await machine('b', forger).build(['--cache-remote', remote]);
    expect(refused.result.exitCode, refused.result.stderr).toBe(0);
    expect(refused.submitted).toBe(4);
    expect(refused.warnings.length).toBeGreaterThanOrEqual(3);
    for (const warning of refused.warnings)
      expect(warning).toMatch(
        new RegExp(
          `^⚠ ${remote}/entries/[0-9a-f]{64}\\.json: the entry is not signed with PIPELINE_CACHE_SIGNING_KEY \\(a wrong or forged signature\\); it counts as not cached, and a run makes its step again$`,
        ),
      );
    const trusted = await machine('c', signer).build(['--cache-remote', remote]);
    expect(trusted.made).toEqual({});
    // No secret in what the runs printed, wrote (journal, log, report, run.json) or stored.
    const secrets = [signer.PIPELINE_CACHE_SIGNING_KEY, forger.PIPELINE_CACHE_SIGNING_KEY];
    for (const run of [first, refused, trusted]) {
      const runFiles = readdirSync(run.report.run_dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString('latin1'));
      expect(runFiles.length).toBeGreaterThanOrEqual(3);
      const written = [run.result.stdout, run.result.stderr, ...runFiles];
      for (const text of written) for (const secret of secrets) expect(text).not.toContain(secret);
    }
    for (const name of (await objects()).filter((n) => n.startsWith('entries/')))
      for (const secret of secrets) expect(await bucket().read(name)).not.toContain(secret);
  });

  it('an unreachable remote is one warning, and the run succeeds with the local tier', async () => {
    const closed = await freePort();
    const m = machine('a', { AWS_ENDPOINT_URL: `http://127.0.0.1:${closed}` });
    const started = Date.now();
    const run = await m.build(['--cache-remote', remote]);
    expect(run.result.exitCode, run.result.stderr).toBe(0);
    expect(run.submitted).toBe(4);
    expect(run.warnings).toHaveLength(1);
    expect(run.warnings[0]).toMatch(
      new RegExp(
        `^⚠ remote cache ${remote} \\(at http://127\\.0\\.0\\.1:${closed}\\) could not be read \\(ECONNREFUSED.*\\); going on with the local cache only$`,
      ),
    );
    expect(Date.now() - started).toBeLessThan(30_000);
    // The local tier worked all along.
    expect((await m.build(['--cache-remote', remote])).made).toEqual({});
    // Where the remote is the whole point, its failure is the command's.
    const listed = await m.pipeline(['cache', 'list', '--remote', '--cache-remote', remote]);
    expect(listed.exitCode).toBe(1);
    // It names the endpoint the requests went to (AWS_ENDPOINT_URL), since the bucket's name does not.
    expect(listed.stderr).toMatch(
      new RegExp(`^pipeline: remote cache ${remote} \\(at http://127\\.0\\.0\\.1:${closed}\\): .*ECONNREFUSED`, 'm'),
    );
  });

  it('prunes the remote: old entries and the files only they used', async () => {
    const m = machine('a');
    await m.build(['--cache-remote', remote]);
    const kept = await m.pipeline(['cache', 'prune', '--remote', '--older-than', '30d', '--json'], {
      PIPELINE_CACHE_REMOTE: remote,
    });
    expect(JSON.parse(kept.stdout).removed).toEqual({ entries: 0, blobs: 0, bytes: 0 });
    // A read-only remote (a pull request's job) deletes nothing either.
    const readOnly = await m.pipeline(['cache', 'prune', '--remote', '--older-than', '0s'], {
      PIPELINE_CACHE_REMOTE: remote,
      PIPELINE_CACHE_REMOTE_READ_ONLY: 'true',
    });
    expect(readOnly.exitCode).toBe(2);
    expect(readOnly.stderr).toContain(
      `pipeline: PIPELINE_CACHE_REMOTE_READ_ONLY is true: a read-only remote is never written, and prune --remote deletes in ${remote}; nothing was removed`,
    );
    expect((await objects()).filter((name) => name.startsWith('entries/'))).toHaveLength(4);
    // A moment later. The bucket dates its blobs by real time, and on the manual clock no time passes
    // between commands unless the test says so: it moves to a second past real time now.
    await clock.advance(Math.max(0, Date.now() - clock.now()) + 1_000);
    const all = await m.pipeline([
      'cache',
      '--cache-remote',
      remote,
      'prune',
      '--remote',
      '--older-than',
      '0s',
      '--json',
    ]);
    expect(all.exitCode, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout).removed).toMatchObject({ entries: 4 });
    expect(await objects()).toEqual([]);
    const none = await m.pipeline(['cache', 'list', '--remote']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain(
      '--remote needs a remote cache: --cache-remote s3://bucket/prefix, or PIPELINE_CACHE_REMOTE',
    );
  });

  it("keeps the entries runs are still served when it prunes: each run's use is marked in the bucket", async () => {
    const DAY = 24 * 60 * 60 * 1000;
    await machine('a').build(['--cache-remote', remote]);
    // Three weeks later a fresh machine (a CI job) is served everything from the bucket.
    await clock.advance(21 * DAY);
    const b = machine('b', { PIPELINE_CACHE_REMOTE: remote });
    const warm = await b.build();
    expect(warm.submitted).toBe(0);
    expect((await objects()).filter((name) => name.startsWith('used/'))).toHaveLength(4);
    // 35 days after they were made, 14 after that use: a 30-day prune keeps them all.
    await clock.advance(14 * DAY);
    const pruned = await b.pipeline(['cache', 'prune', '--remote', '--older-than', '30d', '--json']);
    expect(JSON.parse(pruned.stdout).removed).toMatchObject({ entries: 0 });
    expect(await machine('c', { PIPELINE_CACHE_REMOTE: remote }).build()).toMatchObject({ submitted: 0 });
  });

  it('a remote address that does not read is a usage error that costs nothing', async () => {
    const m = machine('a');
    const flag = await m.build(['--cache-remote', 'https://bucket.example/prefix']);
    expect(flag.result.exitCode).toBe(2);
    expect(flag.result.stderr).toContain(
      'pipeline: --cache-remote: a remote cache is an address such as s3://bucket/prefix, got "https://bucket.example/prefix"',
    );
    const variable = await m.build([], { PIPELINE_CACHE_REMOTE: 's3://key:secret@bucket/prefix' });
    expect(variable.result.exitCode).toBe(2);
    expect(variable.result.stderr).toContain('PIPELINE_CACHE_REMOTE: the remote cache address holds no credentials');
    expect(variable.result.stderr).not.toContain('secret@');
    expect(flag.made).toEqual({});
    expect(variable.made).toEqual({});
    const recipe = join(m.root, 'recipes', 'ci-assets.yaml');
    writeFileSync(
      recipe,
      readFileSync(recipe, 'utf8').replace('  concurrency: 3\n', '  concurrency: 3\n  cache_remote: s3://A\n'),
    );
    const validated = await m.pipeline(['validate', recipe]);
    expect(validated.exitCode).toBe(2);
    expect(validated.stderr).toMatch(/ci-assets\.yaml:\d+:\d+: error: .*cache_remote/);
  });

  it('the remote cache credentials never reach a run: step', async () => {
    const m = machine('a');
    const recipe = join(m.root, 'recipes', 'reads.yaml');
    writeFileSync(
      recipe,
      [
        'version: 1',
        'name: reads',
        'settings:',
        '  pass_env: [AWS_*, PIPELINE_*]',
        'steps:',
        '  text:',
        '    run: env',
        'outputs:',
        '  text: ${{ steps.text.outputs.stdout }}',
        '',
      ].join('\n'),
    );
    const run = await m.pipeline(['run', recipe, '--json', '--cache-remote', remote], {
      AWS_SESSION_TOKEN: 'a-session-token-value',
      PIPELINE_CACHE_SIGNING_KEY: 'a-signing-key-value',
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const seen = JSON.parse(run.stdout).outputs.text as string;
    expect(seen).toMatch(/^AWS_REGION=/m);
    expect(seen).not.toMatch(
      /^(AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|PIPELINE_CACHE_SIGNING_KEY|PIPELINE_API_KEY)=/m,
    );
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
