import { evaluate, ExpressionError, type Scope, shellScript, toText } from '../expressions/expressions.js';
import type { ValueTemplate } from '../plan.js';
import { ok, type Result } from '../result.js';
import { failed, type StepFailure } from './failure.js';
import { renderValue } from './values.js';

/** A text command whose expressions' values reach the shell as environment variables. */
export interface ShellCommand {
  script: string;
  env: Record<string, string>;
}

/** What a `run` item executes: an argv list, a shell command without expressions, or a `ShellCommand`. */
export type Command = unknown[] | string | ShellCommand;

/**
 * A `run` value rendered for one item. A list (or text that is one expression giving a list) is
 * an argv. Text never has a value pasted into it: each `${{ … }}` becomes `${PIPELINE_EXPR_<n>}`
 * and the value, as text, goes into the command's environment.
 */
export function renderCommand(run: ValueTemplate, scope: Scope, where: string): Result<Command, StepFailure> {
  if (run.kind !== 'template') return renderValue(run, scope, where) as Result<Command, StepFailure>;
  const { text, slots } = shellScript(run.template);
  const values: unknown[] = [];
  for (const slot of slots) {
    try {
      values.push(evaluate(slot.expr, scope));
    } catch (error) {
      if (error instanceof ExpressionError) return failed('expression', `${where}: ${error.message}`);
      throw error;
    }
  }
  if (run.template.whole && Array.isArray(values[0])) return ok(values[0]);
  const env: Record<string, string> = {};
  for (const [n, slot] of slots.entries()) {
    const value = toText(values[n]);
    // An environment variable cannot hold a NUL byte (and the command's text could not either).
    if (value.includes('\0')) return failed('expression', `${where}: the value of ${slot.source} contains a NUL byte`);
    env[slot.variable] = value;
  }
  return ok({ script: text, env });
}

export const isShellCommand = (command: unknown): command is ShellCommand =>
  typeof command === 'object' && command !== null && !Array.isArray(command);
