import type { Command } from 'commander';
import type { GatewayClient } from '../gateway/client.js';
import type { TaskResult } from '../gateway/types.js';
import { parseDuration, formatDuration } from '../duration.js';
import { downloadResources } from '../gateway/resource-downloads.js';
import { byIdSchedule, waitForTask } from '../scheduler/poller.js';
import { addConnectionOptions, withConnection, type ConnectionFlags } from './connection.js';
import { GatewayRefusal, UsageError } from './errors.js';
import { printJson, printLine, printTable } from './output.js';
import { unwrap } from './unwrap.js';
import { fromCwd, setExitCode } from './io.js';

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
    printTable(
      ['TYPE', 'ROLE', 'SIZE', files.length ? 'FILE' : 'URL'],
      task.resources.map((r, i) => [
        r.type,
        r.role,
        r.width && r.height ? `${r.width}x${r.height}` : '',
        files[i] ?? r.url,
      ]),
    );
  }
}

/** Downloads every resource of a finished task into `dir`, as `<task>-<n>.<format>`. */
async function downloadTaskFiles(client: GatewayClient, task: TaskResult, dir: string): Promise<string[]> {
  const saved = await downloadResources(client, task, {
    dir,
    name: (index, _count, extension) => `${task.taskId}-${index + 1}.${extension}`,
  });
  if (!saved.ok) throw new GatewayRefusal(saved.error.failure, `download of ${saved.error.url}`);
  return saved.value.map((file) => file.path);
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

  addConnectionOptions(
    task
      .command('wait')
      .description('Poll a task until it ends, within the rate limit; then download its outputs.')
      .argument('<task_id>'),
  )
    .option('--download <dir>', 'download the outputs into this folder')
    .option('--timeout <duration>', 'give up after this long (90s, 15m, …)', '30m')
    .option('--json', 'print JSON')
    .action(async (taskId: string, flags: ConnectionFlags & { download?: string; timeout: string; json?: boolean }) => {
      const timeoutMs = parseDuration(flags.timeout);
      if (timeoutMs === undefined)
        throw new UsageError(`--timeout takes a duration such as 90s or 15m, got ${JSON.stringify(flags.timeout)}`);
      await withConnection(flags, async ({ client, clock }) => {
        const { result } = unwrap(await waitForTask(client, clock, taskId, { ...byIdSchedule(), timeoutMs }));
        const files =
          flags.download && result.state === 'succeeded'
            ? await downloadTaskFiles(client, result, fromCwd(flags.download))
            : [];
        if (flags.json) printJson({ ...taskJson(result), files });
        else printTask(result, files);
        if (result.state === 'failed') setExitCode(1);
      });
    });
}
