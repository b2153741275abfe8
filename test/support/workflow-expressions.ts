/**
 * The few GitHub Actions expressions the shipped workflow uses, evaluated as the runner would.
 * Anything else is an error, so that a workflow that starts using more cannot pass unchecked.
 */
import { hashFilesUnder } from '../../src/engine/hash-files.js';

export interface ExpressionScope {
  workspace: string;
  secrets: Record<string, string>;
  /** github.run_id: a new one for every job this runner runs. */
  runId: string;
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
  const secret = /^secrets\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(expression);
  if (secret) {
    const value = scope.secrets[secret[1]!];
    if (value === undefined) throw new Error(`the workflow reads secrets.${secret[1]}, which the test does not set`);
    return value;
  }
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

/** When a step with this `if` runs: absent is success(); always() and failure() are the others expected. */
export function whenToRun(condition: unknown): 'success' | 'always' | 'failure' {
  if (condition === undefined) return 'success';
  const bare = String(condition).replace(/^\$\{\{\s*(.*?)\s*\}\}$/, '$1');
  if (bare === 'always()') return 'always';
  if (bare === 'failure()') return 'failure';
  throw new Error(`the workflow has "if: ${String(condition)}", which the test's runner does not evaluate`);
}
