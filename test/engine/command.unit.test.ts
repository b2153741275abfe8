import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderCommand } from '../../src/engine/command.js';
import { parseTemplate, type Scope } from '../../src/expressions/expressions.js';
import type { ValueTemplate } from '../../src/plan.js';
import { unexpandedReferences } from '../../src/recipe/shell-expansion.js';

const scope: Scope = {
  inputs: { title: '"; touch pwned; #', n: 3, yes: true, list: ['a', 'b'], obj: { k: 'v' }, none: null, nul: 'a\0b' },
  steps: {},
  run: { id: 'r', dir: '/runs/r' },
  env: {},
};
const text = (value: string): ValueTemplate => ({ kind: 'template', template: parseTemplate(value), text: value });

describe('renderCommand', () => {
  it('puts no value into the script: each is an environment variable, as text', () => {
    const command =
      'printf "%s|%s|%s|%s|%s|%s" "${{ inputs.title }}" ${{ inputs.n }} "${{ inputs.yes }}" ' +
      '"${{ inputs.list }}" "${{ inputs.obj }}" "${{ inputs.none }}"';
    expect(renderCommand(text(command), scope, 'step.run')).toEqual({
      ok: true,
      value: {
        script:
          'printf "%s|%s|%s|%s|%s|%s" "${PIPELINE_EXPR_0}" ${PIPELINE_EXPR_1} "${PIPELINE_EXPR_2}" ' +
          '"${PIPELINE_EXPR_3}" "${PIPELINE_EXPR_4}" "${PIPELINE_EXPR_5}"',
        env: {
          PIPELINE_EXPR_0: '"; touch pwned; #',
          PIPELINE_EXPR_1: '3',
          PIPELINE_EXPR_2: 'true',
          PIPELINE_EXPR_3: 'a\nb',
          PIPELINE_EXPR_4: '{"k":"v"}',
          PIPELINE_EXPR_5: '',
        },
      },
    });
  });

  it('keeps text without expressions, a list, and one expression giving a list as they were', () => {
    expect(renderCommand({ kind: 'literal', value: 'ls | wc -l' }, scope, 's.run')).toEqual({
      ok: true,
      value: 'ls | wc -l',
    });
    const list: ValueTemplate = {
      kind: 'list',
      items: [{ kind: 'literal', value: 'echo' }, text('${{ inputs.title }}')],
    };
    expect(renderCommand(list, scope, 's.run')).toEqual({ ok: true, value: ['echo', '"; touch pwned; #'] });
    expect(renderCommand(text('${{ inputs.list }}'), scope, 's.run')).toEqual({ ok: true, value: ['a', 'b'] });
    expect(renderCommand(text('${{ inputs.title }}'), scope, 's.run')).toEqual({
      ok: true,
      value: { script: '${PIPELINE_EXPR_0}', env: { PIPELINE_EXPR_0: '"; touch pwned; #' } },
    });
  });

  it('fails the item, naming the expression, on a NUL byte or an expression error', () => {
    expect(renderCommand(text('echo "${{ inputs.nul }}"'), scope, 'say.run')).toMatchObject({
      ok: false,
      error: { reason: 'expression', message: 'say.run: the value of ${{ inputs.nul }} contains a NUL byte' },
    });
    expect(renderCommand(text('echo "${{ join(inputs.n) }}"'), scope, 'say.run')).toMatchObject({
      ok: false,
      error: { reason: 'expression', message: 'say.run: join() needs a list, got a number' },
    });
  });
});

describe('the quoting scanner', () => {
  it('ends on any text, and names only the references it was given', () => {
    const piece = fc.constantFrom(
      ...["'", '"', '\\', '$', '(', ')', '`', '{', '}', '#', ' ', '\n', '<<', 'EOF', "'EOF'", '-', 'x', '${V}'],
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const script = pieces.join('');
        const slots = [...script.matchAll(/\$\{V\}/g)].map((m) => m.index);
        const found = unexpandedReferences(script, slots);
        expect([...found.keys()].every((at) => slots.includes(at))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
