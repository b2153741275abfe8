/**
 * The few GitHub Actions expressions the shipped workflow and action use, evaluated as the runner
 * would. Anything else is an error, so that a workflow that starts using more cannot pass unchecked.
 */
import { hashFilesUnder } from '../../src/engine/hash-files.js';

export interface ExpressionScope {
  workspace: string;
  secrets: Record<string, string>;
  /** The repository's variables (`vars.NAME`). */
  vars?: Record<string, string>;
  /** github.run_id: a new one for every job this runner runs. */
  runId: string;
  /** Inside a composite action: its inputs (with their defaults), its folder and its steps' outputs. */
  inputs?: Record<string, string>;
  actionPath?: string;
  /** `steps.ID.outputs.NAME` of the steps that ran so far, in the job or in the action. */
  steps?: Record<string, Record<string, string>>;
}

const EXPRESSION = /\$\{\{\s*(.*?)\s*\}\}/g;

/** hashFiles('a', 'b'): each pattern must match a file, else the cache key would silently ignore it. */
function hashFiles(args: string, scope: ExpressionScope): string {
  const patterns = [...args.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
  if (patterns.length === 0 || args.replace(/'[^']*'/g, '').replace(/[\s,]/g, '') !== '')
    throw new Error(`hashFiles() takes quoted patterns, got (${args})`);
  for (const pattern of patterns)
    if (hashFilesUnder(scope.workspace, [pattern]) === '')
      throw new Error(`hashFiles('${pattern}') matches no file in a fresh checkout`);
  return hashFilesUnder(scope.workspace, patterns);
}

function evaluate(expression: string, scope: ExpressionScope): string {
  if (expression === 'github.workspace') return scope.workspace;
  if (expression === 'github.run_id') return scope.runId;
  if (expression === 'github.run_attempt') return '1';
  if (expression === 'github.action_path' && scope.actionPath) return scope.actionPath;
  const secret = /^secrets\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(expression);
  if (secret) {
    const value = scope.secrets[secret[1]!];
    if (value === undefined) throw new Error(`the workflow reads secrets.${secret[1]}, which the test does not set`);
    return value;
  }
  const variable = /^vars\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(expression);
  if (variable) {
    const value = scope.vars?.[variable[1]!];
    if (value === undefined) throw new Error(`the workflow reads vars.${variable[1]}, which the test does not set`);
    return value;
  }
  const input = /^inputs\.([A-Za-z_][A-Za-z0-9_-]*)$/.exec(expression);
  if (input && scope.inputs) {
    const value = scope.inputs[input[1]!];
    if (value === undefined) throw new Error(`the action reads inputs.${input[1]}, which it does not declare`);
    return value;
  }
  // A step that has not run (or was skipped) has no outputs: GitHub answers ''.
  const output = /^steps\.([A-Za-z_][A-Za-z0-9_-]*)\.outputs\.([A-Za-z_][A-Za-z0-9_-]*)$/.exec(expression);
  if (output && scope.steps) return scope.steps[output[1]!]?.[output[2]!] ?? '';
  const call = /^hashFiles\((.*)\)$/.exec(expression);
  if (call) return hashFiles(call[1]!, scope);
  throw new Error(`the workflow uses \${{ ${expression} }}, which the test's runner does not evaluate`);
}

/** `text` with every `${{ … }}` replaced by its value. */
export function render(text: string, scope: ExpressionScope): string {
  return text.replace(EXPRESSION, (_, expression: string) => evaluate(expression, scope));
}

/** Every string value of a mapping (`env`, `with`) rendered; other values as text. */
export function renderAll(values: Record<string, unknown> | undefined, scope: ExpressionScope) {
  return Object.fromEntries(Object.entries(values ?? {}).map(([k, v]) => [k, render(String(v), scope)]));
}

export interface Condition {
  /** The status function: success() when the condition names none. */
  when: 'success' | 'always' | 'failure';
  /** Whether the comparisons beside it hold (true when there are none). */
  holds: boolean;
}

/** One operand of a comparison: a quoted literal or a context the scope evaluates. */
const operand = (text: string, scope: ExpressionScope) => /^'([^']*)'$/.exec(text)?.[1] ?? evaluate(text, scope);

/**
 * An `if:` as the runner reads it: terms joined by `&&`, each a status function (success(),
 * always(), failure(); `(failure() || cancelled())` is failure(), as this runner never cancels a
 * job) or `A == B` / `A != B`. Any other form (`||`, `!`, other functions) is refused.
 */
export function readCondition(condition: unknown, scope: ExpressionScope): Condition {
  if (condition === undefined) return { when: 'success', holds: true };
  const bare = String(condition).replace(/^\$\{\{\s*(.*?)\s*\}\}$/, '$1');
  let when: Condition['when'] = 'success';
  let holds = true;
  for (const term of bare.split('&&').map((t) => t.trim())) {
    const status = /^(success|always|failure)\(\)$/.exec(term) ?? /^\((failure)\(\) \|\| cancelled\(\)\)$/.exec(term);
    const comparison = /^(\S+)\s*(==|!=)\s*(\S+)$/.exec(term);
    if (status) when = status[1] as Condition['when'];
    else if (comparison) {
      const equal = operand(comparison[1]!, scope) === operand(comparison[3]!, scope);
      holds &&= comparison[2] === '==' ? equal : !equal;
    } else throw new Error(`the workflow has "if: ${String(condition)}", which the test's runner does not evaluate`);
  }
  return { when, holds };
}

/** When a step with this `if` runs: absent is success(); always() and failure() are the others expected. */
export function whenToRun(condition: unknown): 'success' | 'always' | 'failure' {
  const scope = { workspace: '', secrets: {}, runId: '' };
  return readCondition(condition, scope).when;
}
