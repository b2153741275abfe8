// A generated recipe of many steps, for the analysis benchmarks and the large-recipe test.

/**
 * A recipe of `count` steps: chains of search → llm → image, each step referring to the one before.
 * The recipe of plan-10k and validate-100k, and of the test of a recipe near the step limit
 * (test/cli/large-recipe.test.ts).
 */
export function generateRecipe(count, name = 'generated') {
  const lines = ['version: 1', `name: ${name}`, 'inputs:', '  topic: { type: string, default: cargo bikes }', 'steps:'];
  for (let i = 0; i < count; i++) {
    const kind = i % 3;
    if (kind === 0)
      lines.push(
        `  s${i}:`,
        '    uses: web-search',
        `    with: { query: "\${{ inputs.topic }} ${i}", max_results: 3 }`,
      );
    else if (kind === 1)
      lines.push(
        `  s${i}:`,
        '    uses: llm',
        `    with: { model: vendor-x/writer-1, prompt: "Summarise \${{ steps.s${i - 1}.outputs.results[*].content }}" }`,
      );
    else
      lines.push(
        `  s${i}:`,
        '    uses: vendor-a/vendor-a-v3-t2i',
        `    with: { prompt: "\${{ steps.s${i - 1}.outputs.text }}", aspect_ratio: "1:1", n: 1 }`,
      );
  }
  return `${lines.join('\n')}\n`;
}
