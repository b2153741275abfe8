import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

const logo = fileURLToPath(new URL('../../recipes/assets/logo.png', import.meta.url));
const SECRET = 'sk-live-9f8e7d6c5b4a39281706';

let gateway: LocalGateway;
/** The gateway's and the commands' time: task waits and retry backoffs take no real time. */
const clock = new ManualClock();
let home: string;
const everything: string[] = [];

/** Runs the CLI against the gateway with the secret key; keeps all output for the secret check. */
async function pipeline(args: string[], env: Record<string, string | undefined> = {}) {
  const result = await pipelineInProcess(args, {
    env: { PIPELINE_API_KEY: SECRET, PIPELINE_BASE_URL: gateway.baseUrl, PIPELINE_HOME: home, ...env },
    clock,
    gateway,
  });
  everything.push(result.stdout, result.stderr);
  return result;
}

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, keys: { [SECRET]: 'acme' }, latencyScale: 0, seed: 4 });
  home = await mkdtemp(join(tmpdir(), 'pipeline-home-'));
});
afterAll(async () => {
  await gateway.close();
  await rm(home, { recursive: true, force: true });
});

describe('commands that talk to the gateway', () => {
  it('account: people and --json', async () => {
    const plain = await pipeline(['account']);
    expect(plain.exitCode).toBe(0);
    expect(plain.stdout).toBe('key      valid (team acme)\nbalance  $100.0000');
    const json = await pipeline(['account', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ is_valid: true, team: 'acme', balance_usd: 100 });
  });

  it('models list and schema', async () => {
    const list = await pipeline(['models', 'list', '--type', 'image-to-image', '--json']);
    expect(JSON.parse(list.stdout).map((m: { slug: string }) => m.slug)).toEqual(['vendor-b/vendor-b-5.0-lite-edit']);
    const schema = await pipeline(['models', 'schema', 'vendor-a/vendor-a-v3-t2i']);
    expect(schema.exitCode).toBe(0);
    expect(schema.stdout.split('\n')[0]).toMatch(/^FIELD\s+TYPE\s+REQUIRED\s+ALLOWED\s+DEFAULT$/);
    expect(schema.stdout).toMatch(/^n\s+integer\s+1\.\.9\s+1$/m);
    // The live schema is now cached under PIPELINE_HOME.
    expect(await readdir(join(home, 'cache', 'schemas'))).toEqual(['vendor-a--vendor-a-v3-t2i.json']);
    // Asked again within the day: the gateway answers again, and nothing says it could not.
    const reads = () =>
      Object.entries(gateway.stats().requests.by_route)
        .filter(([route]) => route.endsWith('/api_schema'))
        .reduce((sum, [, count]) => sum + count, 0);
    const before = reads();
    const again = await pipeline(['models', 'schema', 'vendor-a/vendor-a-v3-t2i']);
    expect(again.stderr).toBe('');
    expect(reads()).toBe(before + 1);
    const none = await pipeline(['models', 'list', '--type', 'text-to-video']);
    expect(none.stdout).toBe('the gateway has no model of type text-to-video');
    const bad = await pipeline(['models', 'list', '--type', 'audio']);
    expect(bad.exitCode).toBe(2);
  });

  it('files upload, list and rm, which tries every id it is given', async () => {
    const uploaded = await pipeline(['files', 'upload', logo, '--json']);
    expect(uploaded.exitCode).toBe(0);
    const [file] = JSON.parse(uploaded.stdout);
    expect(file).toMatchObject({
      type: 'image',
      filename: 'logo.png',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/files\//),
    });
    const list = await pipeline(['files', 'list']);
    expect(list.stdout).toContain(file.file_id);
    expect(list.stdout.split('\n').at(-1)).toBe('1 of 1 (offset 0)');
    expect((await pipeline(['files', 'rm', file.file_id])).stdout).toBe(`deleted ${file.file_id}`);
    const again = await pipeline(['files', 'rm', file.file_id]);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toBe(
      `pipeline: delete of ${file.file_id}: HTTP 404: Not found: file ${file.file_id} does not exist`,
    );
    expect((await pipeline(['files', 'list', '--limit', '101'])).exitCode).toBe(2);
    // A refused id stops none of the others, and --json says which were deleted and which not.
    const [kept] = JSON.parse((await pipeline(['files', 'upload', logo, '--json'])).stdout);
    const mixed = await pipeline(['files', 'rm', file.file_id, kept.file_id, '--json']);
    expect(mixed.exitCode).toBe(1);
    expect(JSON.parse(mixed.stdout)).toEqual({
      deleted: [kept.file_id],
      failed: [{ file_id: file.file_id, message: `HTTP 404: Not found: file ${file.file_id} does not exist` }],
    });
    expect(mixed.stderr).toBe(
      `pipeline: delete of ${file.file_id}: HTTP 404: Not found: file ${file.file_id} does not exist`,
    );
    expect((await pipeline(['files', 'list'])).stdout).not.toContain(kept.file_id);
  });

  it('files upload checks every file before it sends any: a bad one anywhere in the list, nothing uploaded, exit 2', async () => {
    const readme = fileURLToPath(new URL('../../README.md', import.meta.url));
    const before = gateway.stats().requests.total;
    const refused = await pipeline(['files', 'upload', logo, readme, join(home, 'nofile.png')]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toBe(
      `pipeline: ${readme} is not an image, video or audio file\n${join(home, 'nofile.png')} does not exist\nnothing was uploaded`,
    );
    expect(gateway.stats().requests.total).toBe(before);
  });

  it('task get and task wait --download', async () => {
    const submitted = await fetch(`${gateway.baseUrl}/vendor-a/vendor-a-v3-t2i`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${SECRET}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt: 'a bridge at dusk', n: 2 }),
    }).then((r) => r.json() as Promise<{ data: { task_id: string } }>);
    const id = submitted.data.task_id;
    const out = join(home, 'downloads');
    const waited = await pipeline(['task', 'wait', id, '--download', out, '--json']);
    expect(waited.exitCode).toBe(0);
    const body = JSON.parse(waited.stdout);
    expect(body).toMatchObject({ task_id: id, status: 'success', state: 'succeeded' });
    expect(body.files).toEqual([join(out, `${id}-1.png`), join(out, `${id}-2.png`)]);
    expect((await readdir(out)).sort()).toEqual([`${id}-1.png`, `${id}-2.png`]);
    const got = await pipeline(['task', 'get', id]);
    expect(got.stdout).toMatch(/^status\s+success in \d+ms$/m);
    const missing = await pipeline(['task', 'get', 'task_000000000000000000000000']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toBe('pipeline: HTTP 404: Not found: task task_000000000000000000000000 does not exist');
  });

  it('works against the built-in gateway with --local and no key', async () => {
    const result = await pipeline(['account', '--json', '--local'], {
      PIPELINE_API_KEY: undefined,
      PIPELINE_BASE_URL: undefined,
    });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ is_valid: true, team: 'local' });
  });
});

describe('configuration', () => {
  it('exits 2 without a key and without --local, saying how to fix it', async () => {
    const result = await pipeline(['account'], { PIPELINE_API_KEY: undefined });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(
      'pipeline: no API key: set PIPELINE_API_KEY (or pass --api-key), or add --local to use the built-in gateway',
    );
  });

  it('exits 2 without a gateway address', async () => {
    const result = await pipeline(['account'], { PIPELINE_BASE_URL: undefined });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(
      'pipeline: no gateway address: set PIPELINE_BASE_URL to the media API base (it ends with /api/v1), or add --local',
    );
  });

  it('refuses plain http to anything but loopback, and a base without /api/v1', async () => {
    const remote = await pipeline(['account'], { PIPELINE_BASE_URL: 'http://gateway.example.com/api/v1' });
    expect(remote.exitCode).toBe(2);
    expect(remote.stderr).toBe(
      'pipeline: PIPELINE_BASE_URL uses plain http on gateway.example.com; use https (plain http is allowed only for loopback addresses)',
    );
    const noVersion = await pipeline(['account'], { PIPELINE_BASE_URL: gateway.schemaUrl });
    expect(noVersion.stderr).toBe(`pipeline: PIPELINE_BASE_URL must end with /api/v1, got "${gateway.schemaUrl}"`);
  });

  it('names the flag, not the variable, when the address came from --base-url', async () => {
    const flagged = await pipeline(['account', '--base-url', gateway.schemaUrl]);
    expect(flagged.exitCode).toBe(2);
    expect(flagged.stderr).toBe(`pipeline: --base-url must end with /api/v1, got "${gateway.schemaUrl}"`);
  });

  it('exits 1 with the gateway’s message for a wrong key, and for an unreachable gateway', async () => {
    const wrong = await pipeline(['account'], { PIPELINE_API_KEY: `${SECRET}-revoked` });
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toBe('pipeline: HTTP 401: Authentication failed: the API key is not valid or not active');
    const down = await pipeline(['account'], { PIPELINE_BASE_URL: 'http://127.0.0.1:9/api/v1' });
    expect(down.exitCode).toBe(1);
    expect(down.stderr).toMatch(/^pipeline: could not connect \(ECONNREFUSED\)$/);
  });
});

describe('the API key', () => {
  it('appears in no output of any command above, error or --json', async () => {
    // Also with --api-key on the command line, where it is most tempting to echo it back.
    const flagged = await pipeline(['account', '--api-key', SECRET, '--json'], { PIPELINE_API_KEY: undefined });
    expect(flagged.exitCode).toBe(0);
    expect(everything.length).toBeGreaterThan(20);
    for (const text of everything) expect(text).not.toContain(SECRET);
    expect(everything.join('\n')).not.toContain(SECRET.slice(3));
  });
});

describe('run --json that ends before a run starts', () => {
  const recipe = (withLine: string) =>
    `version: 1\nname: early\nsteps:\n  a:\n    uses: vendor-a/vendor-a-v3-t2i\n    with: ${withLine}\n`;

  /** Writes `text` as a recipe in the home folder and runs it with `--json` and `args`. */
  async function runJson(text: string, args: string[], env: Record<string, string | undefined> = {}) {
    const file = join(home, `early-${everything.length}.yaml`);
    await writeFile(file, text);
    const result = await pipeline(['run', file, '--json', '--no-cache', ...args], env);
    return { ...result, file, json: JSON.parse(result.stdout) };
  }

  it('prints why on stdout: invalid with the diagnostics, refused for its cost, error when the gateway is down', async () => {
    const invalid = await runJson(recipe('{ prompt: hi, nn: 3 }'), []);
    expect(invalid.exitCode).toBe(2);
    expect(invalid.json).toEqual({
      run_id: null,
      status: 'invalid',
      message: `1 error in ${invalid.file}; nothing was run`,
      diagnostics: [
        {
          severity: 'error',
          message: "nn is not an input of this model (vendor-a/vendor-a-v3-t2i); did you mean 'n'?",
          file: invalid.file,
          line: 6,
          column: 25,
          end_line: 6,
          end_column: 27,
        },
      ],
    });
    const submittedBefore = gateway.stats().tasks.submitted;
    const refused = await runJson(recipe('{ prompt: hi }'), ['--max-cost', '0.01']);
    expect(refused.exitCode).toBe(2);
    expect(refused.json).toMatchObject({ run_id: null, status: 'refused', diagnostics: [] });
    expect(refused.json.message).toMatch(
      /^the estimated cost \$0\.0300 is over --max-cost \$0\.0100; nothing was sent$/,
    );
    expect(gateway.stats().tasks.submitted).toEqual(submittedBefore);
    const down = await runJson(recipe('{ prompt: hi }'), [], { PIPELINE_BASE_URL: 'http://127.0.0.1:9/api/v1' });
    expect(down.exitCode).toBe(1);
    expect(down.json).toMatchObject({ run_id: null, status: 'error', diagnostics: [] });
    expect(down.json.message).toMatch(/^could not connect to 127\.0\.0\.1:9 \(PIPELINE_BASE_URL\)/);
    // Without --json, stdout stays empty: the reason is on stderr only.
    const plain = await pipeline(['run', invalid.file]);
    expect(plain.exitCode).toBe(2);
    expect(plain.stdout).toBe('');
  });
});
