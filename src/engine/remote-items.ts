import { existsSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { itemLabel } from '../item-label.js';
import type { PlannedStep } from '../plan.js';
import type { Result } from '../result.js';
import { type Command, isShellCommand } from './command.js';
import type { EngineContext } from './context.js';
import type { StepFailure } from './failure.js';
import type { RemoteItems } from './remote.js';

/** An LLM, web or `run:` item on a worker (a model item goes through remote-model.ts). */
export function runRemotely(
  ctx: EngineContext,
  remote: RemoteItems,
  row: number,
  step: PlannedStep,
  index: number,
  rendered: unknown,
  signal: AbortSignal,
): Promise<Result<unknown, StepFailure>> {
  const item = {
    row,
    step: step.id,
    index,
    label: itemLabel({ step: step.id, index: step.forEach ? index : undefined }),
  };
  if (step.action === 'run') {
    const command = rendered as Command;
    return remote.command({ ...item, command, files: filesNamedBy(command, ctx.runDir) }, ctx.runDir, signal);
  }
  if (step.action === 'llm' || step.action === 'web-search' || step.action === 'web-fetch')
    return remote.action(item, step.action, rendered as Record<string, unknown>, signal);
  throw new Error(`Internal error: a ${step.action} step's items do not run on workers`);
}

/**
 * The local files a command names: each value of its expressions (an argv element, or the value
 * of a `${{ … }}` of a shell command) that is the path of a file here, absolute or relative to
 * the run folder, where the command runs. Those are what a worker elsewhere needs to run it.
 */
export function filesNamedBy(command: Command, runDir: string): Array<{ value: string; path: string }> {
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
