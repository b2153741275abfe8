/**
 * A `run:` item on a worker (`runs_on: worker`): its input files fetched by hash into a folder of
 * their own, the values that named them pointed there, the command run in an empty folder laid out
 * as the run folder (with `outputs/`), and every file it wrote sent back by hash.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { type Command, isShellCommand } from '../engine/command.js';
import { stepFailure, type StepFailure } from '../engine/failure.js';
import { runCommandIn } from '../actions/run/run.js';
import { err, ok, type Result } from '../result.js';
import type { RedisBlobs } from './blobs.js';
import type { CommandAnswer, JobData } from './jobs.js';

type CommandData = Extract<JobData, { kind: 'command' }>;

export async function runCommandJob(
  data: CommandData,
  deps: { blobs: RedisBlobs; env: Record<string, string | undefined>; signal: AbortSignal },
): Promise<Result<CommandAnswer, StepFailure>> {
  const root = await mkdtemp(join(tmpdir(), 'pipeline-worker-'));
  try {
    const inputs = join(root, 'inputs');
    const cwd = join(root, 'run');
    await mkdir(join(cwd, 'outputs'), { recursive: true });
    const moved = new Map<string, string>();
    for (const file of data.files) {
      const bytes = await deps.blobs.get(file.sha256);
      if (!bytes.ok) return err(stepFailure('local-file', `${data.item.label}: ${bytes.error}`));
      const dest = join(inputs, file.sha256.slice(0, 16), basename(file.name));
      await mkdir(join(dest, '..'), { recursive: true });
      await writeFile(dest, bytes.value);
      moved.set(file.value, dest);
    }
    const ran = await runCommandIn(
      { cwd, env: deps.env, passEnv: data.passEnv },
      pointedAt(data.command, moved),
      deps.signal,
    );
    if (!ran.ok) return ran;
    const files: CommandAnswer['files'] = [];
    for (const path of await filesUnder(cwd)) {
      const stored = await deps.blobs.putFile(path);
      if (!stored.ok) return err(stepFailure('command-failed', `${data.item.label}: ${stored.error}`));
      files.push({ path: relative(cwd, path), sha256: stored.value });
    }
    return ok({ outputs: ran.value, files });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** The command with each value that named a coordinator's file replaced by where that file is here. */
function pointedAt(command: Command, moved: ReadonlyMap<string, string>): Command {
  const moveValue = (value: unknown) => (typeof value === 'string' ? (moved.get(value) ?? value) : value);
  if (Array.isArray(command)) return [command[0], ...command.slice(1).map(moveValue)];
  if (isShellCommand(command))
    return {
      script: command.script,
      env: Object.fromEntries(Object.entries(command.env).map(([name, value]) => [name, String(moveValue(value))])),
    };
  return command;
}

async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(path)));
    else if (entry.isFile()) found.push(path);
  }
  return found;
}
