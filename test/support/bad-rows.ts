import { IMAGE_SLUG } from './recipes.js';

/** A poster per batch row; `ratio` and `count` reach the model untyped by any enum or bound of the recipe's own. */
export const POSTER_RECIPE = `version: 1
name: posters
inputs:
  title: { type: string }
  count: { type: integer, default: 1 }
  ratio: { type: string, default: "16:9" }
steps:
  poster:
    uses: ${IMAGE_SLUG}
    with:
      prompt: "A poster for \${{ inputs.title }}"
      aspect_ratio: \${{ inputs.ratio }}
      n: \${{ inputs.count }}
outputs:
  poster: \${{ steps.poster.outputs.images[0] }}
`;

/**
 * Five rows, three of them bad, each its own way: row 2 (line 3) fails an input type, row 3
 * (line 4) has a cell too many, row 4 (line 5) passes the inputs but gives a ratio the model rejects.
 */
export const FIVE_ROWS = 'title,count,ratio\nOne,1,16:9\nTwo,lots,1:1\nThree,1,1:1,extra\nFour,1,7:3\nFive,1,1:1\n';

export const ROW_PROBLEMS = [
  { line: 3, message: `input 'count' must be an integer, got "lots"` },
  { line: 4, message: 'this row has 4 values but the header has 3 columns (title, count, ratio)' },
  {
    line: 5,
    message: (recipe: string) =>
      `input 'ratio' gives steps.poster.with.aspect_ratio (${recipe}:12:21) a value ${IMAGE_SLUG} rejects: ` +
      'aspect_ratio must be one of 16:9, 9:16, 1:1, 4:3, 3:4, 3:2, 2:3, 21:9; got "7:3"',
  },
] as const;

/** The message of each bad row, with the recipe path as the messages name it. */
export const rowMessages = (recipe: string) =>
  ROW_PROBLEMS.map((p) => ({ line: p.line, message: typeof p.message === 'string' ? p.message : p.message(recipe) }));

/** The ratio comes from an earlier step's output: no plan can know it, so the engine judges it. */
export const RUN_TIME_RATIO_RECIPE = `version: 1
name: picked-ratio
inputs:
  title: { type: string }
steps:
  pick: { run: "printf 7:3" }
  poster:
    uses: ${IMAGE_SLUG}
    with:
      prompt: "A poster for \${{ inputs.title }}"
      aspect_ratio: \${{ steps.pick.outputs.stdout }}
`;
