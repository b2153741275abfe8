import { describe, expect, it } from 'vitest';
import { annotationLines, escapeData, escapeProperty, workflowCommand } from '../../src/report/github-commands.js';
import {
  notRunMarkdown,
  stepSummaryMarkdown,
  SUMMARY_LIMIT_BYTES,
  type RunReport,
} from '../../src/report/step-summary.js';

describe('workflow commands', () => {
  it('escapes %, CR and LF in data, and also : and , in properties', () => {
    expect(escapeData('100% done\r\nnext')).toBe('100%25 done%0D%0Anext');
    expect(escapeProperty('a:b,c%\n')).toBe('a%3Ab%2Cc%25%0A');
  });

  it('gives the path relative to the workspace, and every location property', () => {
    const line = workflowCommand(
      {
        kind: 'error',
        file: '/ws/recipes/a.yaml',
        line: 3,
        col: 5,
        endLine: 3,
        endColumn: 9,
        title: 'pipeline: x',
        message: 'bad\nvalue',
      },
      '/ws',
      '/elsewhere',
    );
    expect(line).toBe(
      '::error file=recipes/a.yaml,line=3,col=5,endLine=3,endColumn=9,title=pipeline%3A x::bad%0Avalue',
    );
    expect(workflowCommand({ kind: 'warning', file: 'b.yaml', message: 'm' }, undefined, '/cwd')).toBe(
      '::warning file=b.yaml::m',
    );
  });

  it('annotates ten of each kind, then says in one line how many more', () => {
    const errors = Array.from({ length: 13 }, (_, n) => ({ kind: 'error' as const, message: `e${n}` }));
    const lines = annotationLines([...errors, { kind: 'warning', message: 'w' }], undefined, '/');
    expect(lines.filter((l) => l.startsWith('::error'))).toHaveLength(10);
    expect(lines.filter((l) => l.startsWith('::warning'))).toEqual(['::warning::w']);
    expect(lines.filter((l) => l.startsWith('::notice'))).toEqual([expect.stringContaining('3 more errors')]);
  });
});

const report = (over: Partial<RunReport> = {}): RunReport => ({
  name: 'ci-assets',
  runId: 'r1',
  status: 'failed',
  durationMs: 1500,
  steps: [
    {
      step: 'a|b',
      status: 'succeeded',
      ran: 1,
      cached: 2,
      failed: 0,
      skipped: 3,
      tasks: 1,
      requests: 4,
      rateLimited: 0,
    },
  ],
  spend: '$0.0400 of an estimated $0.0800',
  cache: { hits: 2, requestsSaved: 6, tasksSaved: 2 },
  rateLimited: 0,
  files: ['outputs/a.png'],
  filesDir: '.pipeline/runs/r1/',
  failures: [{ step: 'icon', message: 'line one\nline two' }],
  ...over,
});

describe('the step summary', () => {
  it('is a Markdown table with a header, a separator and one row per step', () => {
    const text = stepSummaryMarkdown(report());
    const table = text.split('\n').filter((l) => l.startsWith('|'));
    expect(table[0]).toBe('| Step | Status | Ran | Cached | Failed | Skipped | Tasks | Requests | 429s |');
    expect(table[1]).toMatch(/^\|(-|-:|--:)/);
    expect(table[2]).toBe('| a\\|b | succeeded | 1 | 2 | 0 | 3 | 1 | 4 | 0 |');
    expect(text).toContain('**icon**: line one line two');
    expect(text).toContain('- `outputs/a.png`');
    expect(text).toMatch(/failed in 1\.5 s/);
  });

  it('stays under 1 MiB however many steps, files and failures there are', () => {
    const steps = Array.from({ length: 30_000 }, (_, n) => ({ ...report().steps[0]!, step: `step-${n}` }));
    const files = Array.from({ length: 30_000 }, (_, n) => `outputs/file-${n}.png`);
    const failures = Array.from({ length: 5000 }, (_, n) => ({ step: `s${n}`, message: 'x'.repeat(3000) }));
    const text = stepSummaryMarkdown(report({ steps, files, failures }));
    expect(Buffer.byteLength(text)).toBeLessThan(SUMMARY_LIMIT_BYTES);
    expect(text).toMatch(/_…and \d+ more steps_/);
    expect(text).toMatch(/_…and \d+ more files_/);
    expect(text).toMatch(/_…and \d+ more failures_/);
  });

  it('says after the table what a batch past the listed rows counted instead of listing', () => {
    const notListed = '… and 99,000 more steps that succeeded in rows past the first 1,000: see the journal';
    const lines = stepSummaryMarkdown(report({ notListed })).split('\n');
    const lastRow = lines.findLastIndex((line) => line.startsWith('|'));
    expect(lines.slice(lastRow + 1, lastRow + 3)).toEqual(['', `_${notListed}_`]);
    expect(stepSummaryMarkdown(report())).not.toContain('more steps that succeeded');
  });

  it('says the spend, the cache, the 429s and the artifact in words, singular or plural', () => {
    const text = stepSummaryMarkdown(report({ rateLimited: 1, artifact: 'pipeline-x' }));
    expect(text).toContain('- **Spend:** $0.0400 of an estimated $0.0800\n');
    expect(text).toContain('- **Step cache:** 2 hits, saving 6 requests and 2 tasks\n');
    expect(text).toContain('- **Rate limits:** 1 response was 429 (rate limited)\n');
    expect(text).toContain('- **Artifact:** `pipeline-x` holds the outputs and report.html\n');
    expect(text).toContain('### Outputs in `.pipeline/runs/r1/`\n\n- `outputs/a.png`');
    const quiet = stepSummaryMarkdown(report({ cache: null, files: [], notCopiedTo: 'build/' }));
    expect(quiet).toContain('- **Step cache:** off (--no-cache)\n');
    expect(quiet).toContain('- **Rate limits:** no 429 (rate limited)\n');
    expect(quiet).not.toContain('Artifact');
    expect(quiet).not.toContain('### Outputs');
    expect(quiet).toContain('Nothing was copied to `build/`: the run failed.');
    const none = stepSummaryMarkdown(
      report({ files: [], notCopiedTo: 'build/', notCopiedBecause: 'the recipe has no `outputs:` section' }),
    );
    expect(none).toContain('Nothing was copied to `build/`: the recipe has no `outputs:` section.');
  });

  it('of a command that ran nothing: the diagnostics in a fence no backtick run in them can close', () => {
    const text = notRunMarkdown('recipes/a.yaml', '1 error in recipes/a.yaml; nothing was run', 'a.yaml:1:1: ```x');
    expect(text).toBe(
      '## ❌ recipes/a.yaml: not run (exit 2)\n\n1 error in recipes/a.yaml; nothing was run\n\n````text\na.yaml:1:1: ```x\n````\n\n',
    );
  });
});
