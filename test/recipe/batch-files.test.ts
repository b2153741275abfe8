import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/recipe/analyzer.js';
import { bundledDeps } from './bundled-deps.js';

const RECIPE = `version: 1
name: notes
inputs:
  topic: { type: string }
  tone: { type: string, default: plain }
steps:
  note: { run: "echo \${{ inputs.topic }} \${{ inputs.tone }}" }
`;

const read = (path: string, text: string) =>
  analyze({ path: 'notes.yaml', text: RECIPE, cwd: process.cwd(), batch: { path, text } }, bundledDeps);

const errors = (path: string, text: string) => {
  const result = read(path, text);
  return result.ok ? [] : result.error.map((d) => `${d.file.position(d.range.start).line}: ${d.message}`);
};

describe('batch files as editors write them', () => {
  it('reads a CSV whose lines end in any mix of CRLF and LF as one row a line, and names the right line', () => {
    // The first line's ending was taken for all: the LF rows after it were read as one row's values.
    const result = read('rows.csv', 'topic\r\nkites\r\nboats\ntrains\nbikes\n');
    expect(result.ok && [...result.value.rows].map((row) => row.topic)).toEqual(['kites', 'boats', 'trains', 'bikes']);
    expect(errors('rows.csv', 'topic\r\nkites\r\nboats\ntrains,loud,extra\nbikes\n')).toEqual([
      '4: this row has 3 values but the header has 1 column (topic)',
    ]);
  });

  it('refuses a CSV header that names a column twice, or leaves one unnamed', () => {
    // The later column's value won, unsaid.
    expect(errors('rows.csv', 'topic,tone,topic\nkites,calm,boats\n')).toEqual([
      "1: the header names 'topic' twice (columns 1 and 3)",
    ]);
    expect(errors('rows.csv', 'topic,\nkites,\n')[0]).toBe('1: column 2 of the header has no name');
  });

  it('says a typo in a CSV header once, at the header, not once a row', () => {
    const rows = Array.from({ length: 500 }, (_, i) => `kites ${i}`).join('\n');
    expect(errors('rows.csv', `topc\n${rows}\n`)).toEqual([
      "1: unknown input 'topc' in the batch file's header; did you mean 'topic'?",
      "1: input 'topic' is required and the batch file's header has no column for it; did you mean 'topc'?",
    ]);
    // A JSONL line's keys are its own: there, each line says its own.
    expect(errors('rows.jsonl', '{"topc":"a"}\n{"topic":"b"}\n')).toEqual([
      "1: unknown input 'topc' in the batch file; did you mean 'topic'?",
      "1: input 'topic' is required and this row does not give it",
    ]);
  });

  it('reads a JSONL file that starts with a byte order mark, as a CSV one is read', () => {
    const result = read('rows.jsonl', '\uFEFF{"topic":"kites"}\n{"topic":"boats"}\n');
    expect(result.ok && [...result.value.rows].map((row) => row.topic)).toEqual(['kites', 'boats']);
  });
});
