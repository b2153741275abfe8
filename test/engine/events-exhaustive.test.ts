import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type EngineEvent, type EventType, unhandledEvent } from '../../src/engine/events.js';

/** Every consumer of the run's events: each must fail to compile when the union gains a kind. */
const CONSUMERS = [
  'src/engine/journal-consumer.ts',
  'src/engine/log-consumer.ts',
  'src/engine/reporter.ts',
  'src/report/failed-step-annotations.ts',
];

const EVENTS = resolve('src/engine/events.ts');

/** The type errors of `files` when the event union has one kind more than today's. */
function errorsWithANewEventKind(files: string[]): Map<string, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(
    resolve('tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  const source = readFileSync(EVENTS, 'utf8');
  const widened = source.replace(
    'export type EngineEvent =\n',
    "export type EngineEvent =\n  | { type: 'a-kind-from-the-future'; at: StepRef }\n",
  );
  if (widened === source) throw new Error('the union in events.ts is no longer where this test looks for it');
  const host = ts.createCompilerHost(config.options);
  const readFile = host.readFile.bind(host);
  host.readFile = (path) => (resolve(path) === EVENTS ? widened : readFile(path));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (path, language, onError, fresh) =>
    resolve(path) === EVENTS
      ? ts.createSourceFile(path, widened, language)
      : getSourceFile(path, language, onError, fresh);
  const program = ts.createProgram(
    files.map((f) => resolve(f)),
    config.options,
    host,
  );
  const errors = new Map<string, string[]>();
  for (const file of files) {
    const diagnostics = program.getSemanticDiagnostics(program.getSourceFile(resolve(file)));
    errors.set(
      file,
      diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    );
  }
  return errors;
}

describe('the run’s event union', () => {
  it('is refused by tsc in a switch that leaves out a kind', () => {
    // Checked by `tsc --noEmit -p .` (test/ is in the project): a switch that leaves out a kind
    // does not reach `unhandledEvent` with `never`, and the compiler refuses it.
    const forgetsOneKind = (event: EngineEvent): void => {
      if (event.type !== 'item-cached') return;
      // @ts-expect-error: 'item-cached' is not handled, so the event is not `never` here
      unhandledEvent(event);
    };
    // At run time an unexpected event is ignored, not thrown.
    expect(() => forgetsOneKind({ type: 'item-cached', item: { step: 's', row: 0 }, key: 'k' })).not.toThrow();
  });

  it('names every kind once', () => {
    expectTypeOf<EventType>().toEqualTypeOf<EngineEvent['type']>();
    expectTypeOf<Extract<EngineEvent, { type: 'step-failed' }>['location']>().toEqualTypeOf<{
      file: string;
      line: number;
      column: number;
    }>();
  });

  it('does not compile until every consumer handles a new kind of event', { timeout: 60_000 }, () => {
    const errors = errorsWithANewEventKind(CONSUMERS);
    for (const file of CONSUMERS) {
      const messages = errors.get(file)!;
      expect(messages.length, `${file} compiles with an event kind it does not handle`).toBeGreaterThan(0);
      expect(messages.join('\n'), file).toMatch(/a-kind-from-the-future.*not assignable to parameter of type 'never'/s);
    }
  });

  it('compiles today (the check above is not failing for another reason)', { timeout: 60_000 }, () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      resolve('tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: () => {},
      },
    )!;
    const program = ts.createProgram(
      CONSUMERS.map((f) => join(process.cwd(), f)),
      config.options,
    );
    for (const file of CONSUMERS)
      expect(program.getSemanticDiagnostics(program.getSourceFile(resolve(file))), file).toEqual([]);
  });
});
