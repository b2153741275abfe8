import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parseTemplate, shellScript } from '../../src/expressions/expressions.js';
import { unexpandedReferences } from '../../src/recipe/shell-expansion.js';

/**
 * Each command, with `${{ inputs.x }}` as the one expression: whether the shell expands its variable
 * there (`expands`), leaves it out harmlessly (`comment`), or leaves it out (the reason reported).
 */
const CASES: Array<[string, 'expands' | 'comment' | 'single-quoted' | 'escaped' | 'quoted-here-document']> = [
  ['echo "${{ inputs.x }}"', 'expands'],
  ['echo ${{ inputs.x }}', 'expands'],
  ['echo a${{ inputs.x }}b', 'expands'],
  ['echo "it\'s ${{ inputs.x }}"', 'expands'],
  ["echo '${{ inputs.x }}'", 'single-quoted'],
  ['echo \'say "${{ inputs.x }}"\'', 'single-quoted'],
  ['awk \'BEGIN { print "${{ inputs.x }}" }\'', 'single-quoted'],
  ["echo 'a'\"${{ inputs.x }}\"'b'", 'expands'],
  ['echo "$(printf \'%s\' "${{ inputs.x }}")"', 'expands'],
  ['echo "$(echo \'${{ inputs.x }}\')"', 'single-quoted'],
  ['echo $(echo ${{ inputs.x }})', 'expands'],
  ['echo `echo "${{ inputs.x }}"`', 'expands'],
  ['echo $((1)) "${{ inputs.x }}"', 'expands'],
  ['echo ${X:-"${{ inputs.x }}"}', 'expands'],
  ['echo \\${{ inputs.x }}', 'escaped'],
  ['echo "\\${{ inputs.x }}"', 'escaped'],
  ['echo "\\\\${{ inputs.x }}"', 'expands'],
  ["echo $'${{ inputs.x }}'", 'single-quoted'],
  ['echo "$\'${{ inputs.x }}\'"', 'expands'],
  ['echo one # ${{ inputs.x }}', 'comment'],
  ['echo a#${{ inputs.x }}', 'expands'],
  ['cat <<EOF\n${{ inputs.x }}\nEOF', 'expands'],
  ['cat <<-EOF\n\t"${{ inputs.x }}"\n\tEOF', 'expands'],
  ["cat <<'EOF'\n${{ inputs.x }}\nEOF", 'quoted-here-document'],
  ['cat <<"EOF" && echo\n${{ inputs.x }}\nEOF', 'quoted-here-document'],
  ["cat <<'EOF'\nnot it\nEOF\necho ${{ inputs.x }}", 'expands'],
  ["cat <<EOF\n'${{ inputs.x }}'\nEOF", 'expands'],
];

const MARK = 'mark-7f3a';

function scan(command: string) {
  const { text, slots } = shellScript(parseTemplate(command));
  return { text, why: unexpandedReferences(text, [slots[0]!.at]).get(slots[0]!.at) };
}

describe('which variable references of a text command the shell expands', () => {
  it.each(CASES)('%j: %s', async (command, expected) => {
    const { text, why } = scan(command);
    expect(why ?? 'expands-or-comment').toBe(
      expected === 'expands' || expected === 'comment' ? 'expands-or-comment' : expected,
    );
    // The shell agrees: the value shows in the output exactly when the reference expands.
    const result = await execa('sh', ['-c', text], { env: { PIPELINE_EXPR_0: MARK }, reject: false });
    expect(result.stdout.includes(MARK), result.stdout).toBe(expected === 'expands');
  });
});
