import { shellScript } from '../expressions/expressions.js';
import type { ValueTemplate } from '../plan.js';
import { error, type Diagnostic } from './diagnostics.js';
import { type NotExpanded, unexpandedReferences } from './shell-expansion.js';
import type { PathPart, SourceFile } from './source.js';

const WHY: Record<NotExpanded, string> = {
  'single-quoted': 'is inside single quotes, where the shell expands nothing',
  escaped: 'follows a \\ or a $, so the shell does not expand it',
  'quoted-here-document': 'is in a here-document with a quoted delimiter, where the shell expands nothing',
};

/**
 * A text `run:` gets each expression's value through an environment variable, which the shell
 * expands only where it expands variables: an expression anywhere else would silently be left out
 * of the command, so it is an error, located at the expression.
 */
export function checkRunQuoting(
  run: ValueTemplate | undefined,
  path: PathPart[],
  file: SourceFile,
  diagnostics: Diagnostic[],
): void {
  if (run?.kind !== 'template' || run.template.whole) return;
  const { text, slots } = shellScript(run.template);
  const unexpanded = unexpandedReferences(
    text,
    slots.map((slot) => slot.at),
  );
  for (const slot of slots) {
    const why = unexpanded.get(slot.at);
    if (!why) continue;
    const message =
      `${slot.source} ${WHY[why]}: its value would not reach the command. A text run: passes each value ` +
      `as an environment variable; put the expression in double quotes ("${slot.source}"), or use the list form`;
    diagnostics.push(error(file, file.locateWithin(path, slot.source), message));
  }
}
