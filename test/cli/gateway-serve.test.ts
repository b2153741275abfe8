import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';

/** The built CLI, as `npx pipeline` runs it (`npm test` builds first). */
const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

let child: ResultPromise | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

/** Starts `pipeline gateway serve` and resolves with its first line of output, parsed. */
async function serve(args: string[]): Promise<{ process: ResultPromise; urls: Record<string, string> }> {
  const process = execa('node', [cli, 'gateway', 'serve', ...args], { reject: false, buffer: true });
  child = process;
  const line = await new Promise<string>((resolve, reject) => {
    let seen = '';
    process.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('\n')) resolve(seen.split('\n')[0]!);
    });
    process.once('exit', () => reject(new Error('the gateway exited before printing its URLs')));
  });
  return { process, urls: JSON.parse(line) };
}

describe('pipeline gateway serve', () => {
  it('prints its URLs and key as one line of JSON, serves, and exits 0 on SIGTERM', async () => {
    const { process, urls } = await serve(['--port', '0', '--key', 'ci-key=ci-team', '--rpm', '7']);
    expect(Object.keys(urls)).toEqual(['base_url', 'tool_url', 'llm_url', 'schema_url', 'api_key']);
    expect(urls.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    expect(urls.tool_url).toBe(urls.base_url!.replace('/api/v1', '/tools'));
    expect(urls.llm_url).toBe(urls.base_url!.replace('/api/v1', '/llm'));
    expect(urls.schema_url).toBe(urls.base_url!.replace('/api/v1', ''));
    expect(urls.api_key).toBe('ci-key');
    const answer = await fetch(`${urls.base_url}/apikey/validate`, { headers: { Authorization: 'Bearer ci-key' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-ratelimit-limit')).toBe('7');
    expect(await answer.json()).toEqual({ code: 0, message: 'success', data: { is_valid: true, team: 'ci-team' } });
    process.kill('SIGTERM');
    const result = await process;
    expect(result.exitCode).toBe(0);
  });

  it('exits 0 on SIGINT too', async () => {
    const { process } = await serve(['--port', '0']);
    process.kill('SIGINT');
    expect((await process).exitCode).toBe(0);
  });

  it('says clearly that a port is in use, and exits 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    const result = await execa('node', [cli, 'gateway', 'serve', '--port', String(port)], { reject: false });
    blocker.close();
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe(
      `pipeline: port ${port} on 127.0.0.1 is already in use; pick another with --port, or 0 for a free one`,
    );
  });

  it.each([
    [['--rpm', 'many'], 'pipeline: --rpm takes a whole number of at least 1, got "many"'],
    [['--fail-rate', '2'], 'pipeline: --fail-rate takes a number from 0 to 1, got "2"'],
    [['--key', 'no-team'], 'pipeline: --key takes KEY=TEAM, got "no-team"'],
  ])('exits 2 on a bad flag %j', async (args, message) => {
    const result = await execa('node', [cli, 'gateway', 'serve', ...args], { reject: false });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
