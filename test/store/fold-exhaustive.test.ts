import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { unhandledEvent } from '../../src/store/item-fold.js';

const root = join(import.meta.dirname, '..', '..');
const journalFile = join(root, 'src', 'store', 'journal.ts');
const UNION_START = 'export type JournalEvent =\n  | RunStartedEvent\n';

/** Type-checks the fold (and what it imports) with `journal.ts` as `rewrite` makes it; answers the fold's errors. */
function foldErrors(rewrite: (journal: string) => string): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error('tsconfig.json does not read');
  const host = ts.createCompilerHost(parsed.options);
  const readFile = host.readFile.bind(host);
  host.readFile = (path) => {
    const text = readFile(path);
    return path === journalFile && text !== undefined ? rewrite(text) : text;
  };
  const program = ts.createProgram([join(root, 'src', 'store', 'fold.ts')], parsed.options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? d.file.fileName.slice(root.length + 1) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
    );
}

describe('the one fold of the journal', () => {
  it('does not compile when the journal gains an event type that its switch leaves out', () => {
    expect(readFileSync(journalFile, 'utf8')).toContain(UNION_START);
    // As the code stands, the fold compiles.
    expect(foldErrors((text) => text)).toEqual([]);
    // A new kind of record in the journal, handled nowhere: the fold's `never` check refuses it.
    const errors = foldErrors((text) =>
      text.replace(UNION_START, `${UNION_START}  | { type: 'brand-new-event'; t: number }\n`),
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBe(
      `src/store/fold.ts: Argument of type '{ type: "brand-new-event"; t: number; }' is not assignable to parameter of type 'never'.`,
    );
  });

  it('ignores at run time an event type it does not know: a newer version may have written it', () => {
    // @ts-expect-error: an event of a known type is never unhandled; only a newer journal's reaches here.
    expect(unhandledEvent({ type: 'from-a-newer-version', t: 1 })).toBeUndefined();
  });
});
