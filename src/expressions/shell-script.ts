import type { Expr } from './syntax.js';
import type { Template } from './template.js';

/** The environment variable that carries the value of a text command's expression number `n`. */
export const valueVariable = (n: number) => `PIPELINE_EXPR_${n}`;

/** One expression of a text command, as the shell script refers to it. */
export interface ScriptSlot {
  /** The environment variable that holds the value. */
  variable: string;
  expr: Expr;
  /** `${{ … }}` as written. */
  source: string;
  /** Where `${VARIABLE}` starts in the script. */
  at: number;
}

/**
 * A text command with each `${{ … }}` replaced by `${PIPELINE_EXPR_<n>}`: the values travel in the
 * command's environment, so that the shell expands them as data and never parses them as code.
 */
export function shellScript(template: Template): { text: string; slots: ScriptSlot[] } {
  let text = '';
  const slots: ScriptSlot[] = [];
  for (const part of template.parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    const variable = valueVariable(slots.length);
    slots.push({ variable, expr: part.expr, source: part.source, at: text.length });
    text += `\${${variable}}`;
  }
  return { text, slots };
}
