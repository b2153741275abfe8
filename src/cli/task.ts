import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { GatewayClient } from '../gateway/client.js';
import type { TaskResult } from '../gateway/types.js';
import { parseDuration, formatDuration } from '../duration.js';
import { sleep, type Clock } from '../clock.js';
import { addConnectionOptions, withConnection, type ConnectionFlags } from './connection.js';
import { GatewayRefusal, UsageError } from './errors.js';
import { printJson, printLine, printTable } from './output.js';
import { unwrap } from './unwrap.js';

const taskJson = (t: TaskResult) => ({
  task_id: t.taskId,
  model_id: t.modelId,
  status: t.status,
  state: t.state,
  duration_ms: t.durationMs ?? null,
  resources: t.resources,
  metadata: t.metadata,
  submit_time: t.submitTime ?? null,
  end_time: t.endTime ?? null,
  result_expires_at: t.resultExpiresAt ?? null,
  error: t.error ?? null,
});

function printTask(task: TaskResult, files: string[] = []): void {
  printLine(`task     ${task.taskId}`);
  printLine(`model    ${task.modelId}`);
  printLine(`status   ${task.status}${task.durationMs !== undefined ? ` in ${formatDuration(task.durationMs)}` : ''}`);
  if (task.error) printLine(`error    ${task.error.message}`);
  if (task.resultExpiresAt) printLine(`expires  ${new Date(task.resultExpiresAt).toISOString()}`);
  if (task.resources.length > 0) {
    printLine();
    printTable(['TYPE', 'ROLE', 'SIZE', files.length ? 'FILE' : 'URL'], task.resources.map((r, i) => [r.type, r.role, r.width && r.height ? `${r.width}x${r.height}` : '', files[i] ?? r.url]));
  }
}

/**
 * Polls until the task ends: the first read at once, then 2 s, growing by half each time to 15 s.
 * Every poll goes through the shared budget, so it keeps within the rate limit.
 */
export async function waitForTask(client: GatewayClient, clock: Clock, taskId: string, timeoutMs: number, signal?: AbortSignal): Promise<TaskResult> {
  const deadline = clock.now() + timeoutMs;
  let delay = 2000;
  for (;;) {
    const task = unwrap(await client.task(taskId, signal));
    if (task.state !== 'running') return task;
    const left = deadline - clock.now();
    if (left <= 0) throw new GatewayRefusal({ reason: 'timeout', phase: 'body', message: `task ${taskId} is still ${task.status} after ${formatDuration(timeoutMs)}`, retryable: false, outcomeUnknown: false });
    await sleep(clock, Math.min(delay, left), signal);
    delay = Math.min(15_000, delay * 1.5);
  }
}

/** Downloads every resource of a finished task into `dir`, as `<task>-<n>.<format>`. */
export async function downloadResources(client: GatewayClient, task: TaskResult, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const paths: string[] = [];
  for (const [index, resource] of task.resources.entries()) {
    const extension = (resource.format ?? resource.url.split('?')[0]!.split('.').pop() ?? 'bin').replace(/[^a-z0-9]/gi, '').slice(0, 8) || 'bin';
    const path = join(dir, `${task.taskId}-${index + 1}.${extension}`);
    const expect = ['image', 'video', 'audio'].includes(resource.type) ? resource.type : undefined;
    unwrap(await client.download(resource.url, path, expect ? { expect } : {}), `download of ${resource.url}`);
    paths.push(path);
  }
  return paths;
}

export function registerTaskCommand(program: Command): void {
  const task = program.command('task').description('Read tasks by id.');

  addConnectionOptions(task.command('get').description("Show a task's state and outputs.").argument('<task_id>'))
    .option('--json', 'print JSON')
    .action(async (taskId: string, flags: ConnectionFlags & { json?: boolean }) =>
      withConnection(flags, async ({ client }) => {
        const result = unwrap(await client.task(taskId));
        if (flags.json) return printJson(taskJson(result));
        printTask(result);
      }),
    );

  addConnectionOptions(task.command('wait').description('Poll a task until it ends, within the rate limit; then download its outputs.').argument('<task_id>'))
    .option('--download <dir>', 'download the outputs into this folder')
    .option('--timeout <duration>', 'give up after this long (90s, 15m, …)', '30m')
    .option('--json', 'print JSON')
    .action(async (taskId: string, flags: ConnectionFlags & { download?: string; timeout: string; json?: boolean }) => {
      const timeoutMs = parseDuration(flags.timeout);
      if (timeoutMs === undefined) throw new UsageError(`--timeout takes a duration such as 90s or 15m, got ${JSON.stringify(flags.timeout)}`);
      await withConnection(flags, async ({ client, clock }) => {
        const result = await waitForTask(client, clock, taskId, timeoutMs);
        const files = flags.download && result.state === 'succeeded' ? await downloadResources(client, result, resolve(flags.download)) : [];
        if (flags.json) printJson({ ...taskJson(result), files });
        else printTask(result, files);
        if (result.state === 'failed') process.exitCode = 1;
      });
    });
}
