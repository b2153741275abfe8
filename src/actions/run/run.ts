import { existsSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { commandEnvironment } from '../../credentials.js';
import { type Command, isShellCommand, renderCommand } from '../../engine/command.js';
import type { EngineContext } from '../../engine/context.js';
import { failed, interrupted } from '../../engine/failure.js';
import type { RunStep } from '../../plan.js';
import { err, ok } from '../../result.js';
import type { ActionRun, RunnerResult } from '../run-part.js';
import { remoteItem } from '../run-kit.js';

/** The last lines of a command's error output, for a failure message. */
const tail = (text: string) => text.split('\n').slice(-15).join('\n').slice(-2000);

/**
 * A local command in the run's folder: text through the shell (the values of its expressions in
 * its environment), or an argv list as is.
 */
export function runCommand(ctx: EngineContext, command: Command, signal: AbortSignal): RunnerResult {
  return runCommandIn({ cwd: ctx.runDir, env: ctx.env, passEnv: ctx.plan.settings.passEnv }, command, signal);
}

/** The same in any folder (a worker's): `env` is filtered by `passEnv` as for the recipe's commands. */
export async function runCommandIn(
  where: { cwd: string; env: Record<string, string | undefined>; passEnv: readonly string[] },
  command: Command,
  signal: AbortSignal,
): RunnerResult {
  const options = {
    cwd: where.cwd,
    reject: false,
    cancelSignal: signal,
    env: commandEnvironment(where.env, where.passEnv),
    extendEnv: false,
    stripFinalNewline: true,
    maxBuffer: 64 * 1024 * 1024,
    // Its own process group, stopped whole (stopGroupOnAbort): a shell's children keep its output
    // pipes open, and a stopped shell whose `sleep` runs on would hold the step past its time limit.
    detached: GROUPS,
  } as const;
  // Loaded by the first command a run starts: `plan` reads this module for the cache forecast and
  // runs nothing, and execa is a hundred modules.
  const { execa } = await import('execa');
  const subprocess = Array.isArray(command)
    ? execa(String(command[0]), command.slice(1).map(String), options)
    : isShellCommand(command)
      ? execa(command.script, { ...options, env: { ...options.env, ...command.env }, shell: true })
      : execa(String(command), { ...options, shell: true });
  const release = stopGroupOnAbort(subprocess.pid, signal);
  const result = await subprocess.finally(release);
  if (signal.aborted) return err(interrupted('the command was stopped'));
  // A program that never started (the list form runs it without a shell, which would have said
  // `not found` and exited 127): name it, and why.
  if (result.exitCode === undefined && !result.signal) {
    const cause = result.cause as NodeJS.ErrnoException | undefined;
    const program = Array.isArray(command) ? String(command[0]) : 'the shell';
    return failed(
      'command-failed',
      cause?.code === 'ENOENT'
        ? `${program}: not found (ENOENT): is it installed, and on the PATH?`
        : `${program} could not be started: ${cause?.message ?? result.shortMessage}`,
    );
  }
  const exitCode = result.exitCode ?? -1;
  if (exitCode !== 0) {
    const stderr = result.stderr ? `:\n${tail(String(result.stderr))}` : '';
    return failed(
      'command-failed',
      `the command exited with ${result.exitCode ?? result.signal ?? 'an error'}${stderr}`,
    );
  }
  let json: unknown = null;
  try {
    json = JSON.parse(String(result.stdout));
  } catch {
    json = null;
  }
  return ok({ stdout: String(result.stdout), stderr: String(result.stderr), exit_code: exitCode, json });
}

/** Process groups where the system has them: a command is then stopped with everything it started. */
const GROUPS = process.platform !== 'win32';

/** How long a stopped command's group has to end after SIGTERM before it is killed. */
const KILL_AFTER_MS = 2000;

/**
 * When `signal` aborts (the step's time limit, Ctrl-C), sends SIGTERM to the command's whole process
 * group, and SIGKILL to what is left of it after KILL_AFTER_MS. Answers the function that stops listening.
 */
function stopGroupOnAbort(pid: number | undefined, signal: AbortSignal): () => void {
  if (!GROUPS || pid === undefined) return () => {};
  const toGroup = (name: NodeJS.Signals) => {
    try {
      process.kill(-pid, name);
    } catch {
      // The group has ended already.
    }
  };
  const stop = () => {
    toGroup('SIGTERM');
    // Kept after the command ends: the group may outlive its leader (a child left running).
    setTimeout(() => toGroup('SIGKILL'), KILL_AFTER_MS).unref();
  };
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  return () => signal.removeEventListener('abort', stop);
}

/**
 * The local files a command names: each value of its expressions (an argv element, or the value
 * of a `${{ … }}` of a shell command) that is the path of a file here, absolute or relative to
 * the run folder, where the command runs. Those are what a worker elsewhere needs to run it.
 */
function filesNamedBy(command: Command, runDir: string): Array<{ value: string; path: string }> {
  const values = Array.isArray(command)
    ? command.slice(1).map(String)
    : isShellCommand(command)
      ? Object.values(command.env)
      : [];
  const files = new Map<string, string>();
  for (const value of values) {
    if (value.length === 0 || value.length > 4096 || value.includes('\n') || files.has(value)) continue;
    const path = isAbsolute(value) ? value : resolve(runDir, value);
    if (existsSync(path) && statSync(path).isFile()) files.set(value, path);
  }
  return [...files].map(([value, path]) => ({ value, path }));
}

export const runRun: ActionRun<RunStep> = {
  render: (step, scope, where) => renderCommand(step.run, scope, `${where}.run`),
  timedFromSlot: false,
  onWorkers: (step) => step.runsOn === 'worker',
  run: ({ ctx, row, step, index, signal }, input) => {
    const command = input as Command;
    if (!ctx.remote?.takes(step)) return runCommand(ctx, command, signal);
    const files = filesNamedBy(command, ctx.runDir);
    return ctx.remote.command({ ...remoteItem(row, step, index), command, files }, ctx.runDir, signal);
  },
  cache: {
    keyAction: () => 'run',
    // A command is an argv list, a string, or a script with the values of its expressions by
    // variable (so the key depends on them): there are no fields, only paths.
    inputHasFields: false,
    // A local command: its result is the same whichever gateway the run uses.
    answeredByGateway: false,
    cost: () => ({ tasks: 0, requests: 1 }),
    restoresFiles: true,
  },
};
