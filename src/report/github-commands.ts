import { isAbsolute, relative, sep } from 'node:path';
import { plural } from '../format.js';

/** GitHub shows at most this many annotations of one kind per job step and drops the rest. */
export const ANNOTATIONS_PER_KIND = 10;

/** A message GitHub should pin to a place in a file. */
export interface Annotation {
  kind: 'error' | 'warning';
  /** Absolute, or relative to the working directory. */
  file?: string;
  line?: number;
  col?: number;
  endLine?: number;
  endColumn?: number;
  title?: string;
  message: string;
}

/** The data of a workflow command (after `::`): `%`, CR and LF are escaped, or the line would end. */
export const escapeData = (text: string): string =>
  text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');

/** A property value: as data, and also `:` and `,`, which separate properties. */
export const escapeProperty = (text: string): string => escapeData(text).replaceAll(':', '%3A').replaceAll(',', '%2C');

/** `file` as GitHub links it: relative to the workspace, with forward slashes. */
export function workspacePath(file: string, workspace: string | undefined, cwd: string): string {
  const absolute = isAbsolute(file) ? file : `${cwd}${sep}${file}`;
  const base = workspace ?? cwd;
  const rel = relative(base, absolute);
  const shown = rel.startsWith('..') || isAbsolute(rel) ? absolute : rel;
  return shown.split(sep).join('/');
}

/** `::error file=…,line=…,col=…,endLine=…,endColumn=…,title=…::message`. */
export function workflowCommand(annotation: Annotation, workspace: string | undefined, cwd: string): string {
  const props: Array<[string, string | number | undefined]> = [
    ['file', annotation.file === undefined ? undefined : workspacePath(annotation.file, workspace, cwd)],
    ['line', annotation.line],
    ['col', annotation.col],
    ['endLine', annotation.endLine],
    ['endColumn', annotation.endColumn],
    ['title', annotation.title],
  ];
  const given = props.filter((p): p is [string, string | number] => p[1] !== undefined);
  const text = given.map(([name, value]) => `${name}=${escapeProperty(String(value))}`).join(',');
  return `::${annotation.kind}${text ? ` ${text}` : ''}::${escapeData(annotation.message)}`;
}

/**
 * The workflow-command lines of one job step's annotations: the first ten of each kind, then one
 * notice that says how many more there are (GitHub would drop them silently; notices have their own
 * allowance). The full list is in the log beside them.
 */
export function annotationLines(annotations: Annotation[], workspace: string | undefined, cwd: string): string[] {
  const lines: string[] = [];
  for (const kind of ['error', 'warning'] as const) {
    const ofKind = annotations.filter((a) => a.kind === kind);
    for (const annotation of ofKind.slice(0, ANNOTATIONS_PER_KIND))
      lines.push(workflowCommand(annotation, workspace, cwd));
    const more = ofKind.length - ANNOTATIONS_PER_KIND;
    if (more > 0) {
      const what = `${plural(more, `more ${kind}`)}`;
      const message = `${what}: GitHub shows ${ANNOTATIONS_PER_KIND} per step; all are in the log`;
      lines.push(`::notice title=${escapeProperty(`${what} not annotated`)}::${escapeData(message)}`);
    }
  }
  return lines;
}
