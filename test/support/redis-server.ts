import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

/** Whether `redis-server` is on PATH. Tests that need it skip without it, except under CI. */
export const hasRedis = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
export const redisTestsRun = hasRedis || Boolean(process.env.CI);

export interface RedisServer {
  port: number;
  url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
}

/**
 * Starts `redis-server` with nothing saved on a loopback port. Redis cannot be told to pick a
 * free port and report it (`--port 0` turns TCP off), so a random port outside the kernel's
 * ephemeral range is tried and another one is drawn when the bind fails: nothing is closed and
 * reused, so no other process can slip in between.
 */
export async function startRedis(password?: string): Promise<RedisServer> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const child = await launch(port, password);
    if (child) return server(port, child, password);
  }
  throw new Error('could not start redis-server on any of 20 random ports');
}

function server(port: number, first: ChildProcess, password: string | undefined): RedisServer {
  let child: ChildProcess | undefined = first;
  const auth = password ? `:${password}@` : '';
  return {
    port,
    url: `redis://${auth}127.0.0.1:${port}`,
    async stop() {
      if (!child) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      child = undefined;
    },
    async start() {
      child = await launch(port, password);
      if (!child) throw new Error(`redis-server could not bind port ${port} again`);
    },
  };
}

/** The running server, or undefined when the port was taken. */
function launch(port: number, password: string | undefined): Promise<ChildProcess | undefined> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  if (password) args.push('--requirepass', password);
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes('Ready to accept connections')) return;
      // A server waiting for commands is no work under way: unreferenced, its handles do not count
      // as real I/O, so a time-skipping clock (test/support/time-skipping.ts) moves while it runs.
      child.unref();
      for (const stream of [child.stdout, child.stderr]) (stream as unknown as { unref?: () => void }).unref?.();
      resolve(child);
    });
    child.once('error', reject);
    child.once('exit', () => {
      if (/Address already in use|bind/i.test(output)) resolve(undefined);
      else reject(new Error(`redis-server exited: ${output.slice(-500)}`));
    });
  });
}
