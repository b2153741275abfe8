/**
 * Invalid recipes, each with the exact diagnostics expected. A case's `yaml` is the whole file;
 * `sets` and `batch` are its inputs. Files it names live in recipes/assets (the recipe is read as
 * if it sat in recipes/).
 */
export interface InvalidCase {
  name: string;
  yaml: string;
  sets?: string[];
  batch?: { path: string; text: string };
  /** Every diagnostic, formatted exactly as `pipeline validate` prints it. */
  expected: string;
}

const head = 'version: 1\nname: broken\n';
const t2i = (withText: string) => `${head}steps:\n  hero:\n    uses: vendor-a/vendor-a-v3-t2i\n    with: ${withText}\n`;

export const INVALID_CASES: InvalidCase[] = [
  {
    name: 'YAML syntax error: a list never closed, at its bracket rather than past the last line',
    yaml: `${head}steps:\n  a: [unclosed\n`,
    expected:
      'recipes/broken.yaml:4:6: error: this [ is never closed: end the list with ] (a list written over several lines goes on indented past its key)\n  |\n4 |   a: [unclosed\n  |      ~',
  },
  {
    name: 'a flow map never closed, before another step',
    yaml: `${t2i('{ prompt: red, aspect_ratio: "16:9"')}  edit:\n    run: echo\n`,
    expected:
      'recipes/broken.yaml:6:11: error: this { is never closed: end the map with } (a map written over several lines goes on indented past its key)\n  |\n6 |     with: { prompt: red, aspect_ratio: "16:9"\n  |           ~',
  },
  {
    name: 'unclosed double quote on the last line',
    yaml: t2i('{ prompt: "a cat }'),
    expected:
      'recipes/broken.yaml:6:21: error: the text this " opens is never closed\n  |\n6 |     with: { prompt: "a cat }\n  |                     ~',
  },
  {
    name: 'unclosed single quote, with a quote doubled inside',
    yaml: `${head}steps:\n  a:\n    run: 'it''s "here"\n`,
    expected:
      "recipes/broken.yaml:5:10: error: the text this ' opens is never closed\n  |\n5 |     run: 'it''s \"here\"\n  |          ~",
  },
  {
    name: 'duplicate key',
    yaml: `${head}steps:\n  a: { run: echo }\n  a: { run: echo }\n`,
    expected:
      "recipes/broken.yaml:5:3: error: the key 'a' appears twice in this mapping\n  |\n5 |   a: { run: echo }\n  |   ~",
  },
  {
    name: 'empty recipe',
    yaml: '\n',
    expected:
      'recipes/broken.yaml:1:1: error: the recipe is empty; a recipe starts with version: 1, a name and its steps\n  |\n1 | \n  | ~',
  },
  {
    name: 'not a mapping',
    yaml: '- just\n- a list\n',
    expected: 'recipes/broken.yaml:1:1: error: the recipe must be a mapping, got a list\n  |\n1 | - just\n  | ~~~~~~',
  },
  {
    name: 'missing version',
    yaml: 'name: broken\nsteps:\n  a: { run: echo }\n',
    expected: 'recipes/broken.yaml:1:1: error: the recipe needs version\n  |\n1 | name: broken\n  | ~~~~~~~~~~~~',
  },
  {
    name: 'wrong version',
    yaml: 'version: 2\nname: broken\nsteps:\n  a: { run: echo }\n',
    expected: 'recipes/broken.yaml:1:10: error: version must be 1 (got 2)\n  |\n1 | version: 2\n  |          ~',
  },
  {
    name: 'bad name',
    yaml: 'version: 1\nname: Broken Recipe\nsteps:\n  a: { run: echo }\n',
    expected:
      'recipes/broken.yaml:2:7: error: name must be lowercase letters, digits and -, starting with a letter or digit (got "Broken Recipe")\n  |\n2 | name: Broken Recipe\n  |       ~~~~~~~~~~~~~',
  },
  {
    name: 'no steps',
    yaml: `${head}steps: {}\n`,
    expected: 'recipes/broken.yaml:3:8: error: steps must have at least one step\n  |\n3 | steps: {}\n  |        ~~',
  },
  {
    name: 'unknown top-level key',
    yaml: `${head}stepz: {}\nsteps:\n  a: { run: echo }\n`,
    expected:
      "recipes/broken.yaml:3:1: error: unknown key 'stepz' in the recipe (did you mean 'steps'?); a recipe has version, name, description, inputs, settings, steps, outputs\n  |\n3 | stepz: {}\n  | ~~~~~",
  },
  {
    name: 'bad step id',
    yaml: `${head}steps:\n  Hero: { run: echo }\n`,
    expected:
      "recipes/broken.yaml:4:3: error: step id 'Hero' must be lowercase letters, digits, _ and -, starting with a letter\n  |\n4 |   Hero: { run: echo }\n  |   ~~~~",
  },
  {
    name: 'step with neither uses nor run',
    yaml: `${head}steps:\n  a: { with: { x: 1 } }\n`,
    expected:
      "recipes/broken.yaml:4:3: error: step 'a' needs uses (an action) or run (a command)\n  |\n4 |   a: { with: { x: 1 } }\n  |   ~",
  },
  {
    name: 'step with both uses and run',
    yaml: `${head}steps:\n  a: { uses: web-search, run: echo, with: { query: x } }\n`,
    expected:
      "recipes/broken.yaml:4:26: error: step 'a' has both uses and run; a step has exactly one of them\n  |\n4 |   a: { uses: web-search, run: echo, with: { query: x } }\n  |                          ~~~",
  },
  {
    name: 'unknown step key',
    yaml: `${head}steps:\n  a: { run: echo, retries: 3 }\n`,
    expected:
      "recipes/broken.yaml:4:19: error: unknown key 'retries' in step 'a'; a step has uses, with, run, needs, for_each, if, retry, timeout, continue_on_error, cache, runs_on, description\n  |\n4 |   a: { run: echo, retries: 3 }\n  |                   ~~~~~~~",
  },
  {
    name: 'a reason never retried, named as non-retryable',
    yaml: `${head}steps:\n  a: { run: echo, retry: { attempts: 1, non_retryable: [outcome-unknown] } }\n`,
    expected:
      'recipes/broken.yaml:4:57: error: steps.a.retry.non_retryable[0] must be one of task-failed, invalid-output, command-failed, rate-limited, server-error, unavailable, connection-failed, connection-dropped, timeout, malformed-response, http-error (got "outcome-unknown")\n  |\n4 |   a: { run: echo, retry: { attempts: 1, non_retryable: [outcome-unknown] } }\n  |                                                         ~~~~~~~~~~~~~~~',
  },
  {
    name: 'runs_on on a uses step',
    yaml: `${head}steps:\n  a: { uses: web-search, with: { query: x }, runs_on: worker }\n`,
    expected:
      "recipes/broken.yaml:4:46: error: runs_on says where a run step's command runs; a uses step goes to the workers whenever the run has --workers\n  |\n4 |   a: { uses: web-search, with: { query: x }, runs_on: worker }\n  |                                              ~~~~~~~",
  },
  {
    name: 'runs_on of another value',
    yaml: `${head}steps:\n  a: { run: echo, runs_on: gpu }\n`,
    expected:
      'recipes/broken.yaml:4:28: error: steps.a.runs_on must be one of worker, local (got "gpu")\n  |\n4 |   a: { run: echo, runs_on: gpu }\n  |                            ~~~',
  },
  {
    name: 'unknown action',
    yaml: `${head}steps:\n  a: { uses: websearch, with: { query: x } }\n`,
    expected:
      'recipes/broken.yaml:4:14: error: uses must be web-search, web-fetch, llm, upload or a model slug provider/model_id (got "websearch")\n  |\n4 |   a: { uses: websearch, with: { query: x } }\n  |              ~~~~~~~~~',
  },
  {
    name: 'unknown model',
    yaml: `${head}steps:\n  a: { uses: vendor-z/imagine-9, with: { prompt: x } }\n`,
    expected:
      "recipes/broken.yaml:4:14: error: unknown model 'vendor-z/imagine-9': no schema for it from the gateway or in schemas/models/\n  |\n4 |   a: { uses: vendor-z/imagine-9, with: { prompt: x } }\n  |              ~~~~~~~~~~~~~~~~~~",
  },
  {
    name: 'a misspelt model',
    yaml: `${head}steps:\n  a: { uses: vendor-a/vendor-a-v3-tti, with: { prompt: x } }\n`,
    expected:
      "recipes/broken.yaml:4:14: error: unknown model 'vendor-a/vendor-a-v3-tti': no schema for it from the gateway or in schemas/models/; did you mean 'vendor-a/vendor-a-v3-t2i'?\n  |\n4 |   a: { uses: vendor-a/vendor-a-v3-tti, with: { prompt: x } }\n  |              ~~~~~~~~~~~~~~~~~~~~~~~~",
  },

  {
    name: 'bad timeout',
    yaml: `${head}steps:\n  a: { run: echo, timeout: soon }\n`,
    expected:
      'recipes/broken.yaml:4:28: error: steps.a.timeout must be a duration such as 90s or 15m\n  |\n4 |   a: { run: echo, timeout: soon }\n  |                            ~~~~',
  },
  {
    name: 'pass_env entry that is no variable name',
    yaml: `${head}settings: { pass_env: ["*"] }\nsteps:\n  a: { run: echo }\n`,
    expected:
      'recipes/broken.yaml:3:24: error: settings.pass_env[0] must be an environment variable name (letters, digits and _, not starting with a digit), or a prefix of one ending in * such as AWS_*\n  |\n3 | settings: { pass_env: ["*"] }\n  |                        ~~~',
  },
  {
    name: 'cache_remote that is no s3 address',
    yaml: `${head}settings: { cache_remote: "http://bucket/x" }\nsteps:\n  a: { run: echo }\n`,
    expected:
      'recipes/broken.yaml:3:27: error: settings.cache_remote must be an s3:// address such as s3://bucket/prefix\n  |\n3 | settings: { cache_remote: "http://bucket/x" }\n  |                           ~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'bad rpm setting',
    yaml: `${head}settings: { rpm: fast }\nsteps:\n  a: { run: echo }\n`,
    expected:
      'recipes/broken.yaml:3:18: error: settings.rpm must be auto or a whole number of at least 1\n  |\n3 | settings: { rpm: fast }\n  |                  ~~~~',
  },
  {
    name: 'concurrency below 1',
    yaml: `${head}settings: { concurrency: 0 }\nsteps:\n  a: { run: echo }\n`,
    expected:
      'recipes/broken.yaml:3:26: error: settings.concurrency must be at least 1 (got 0)\n  |\n3 | settings: { concurrency: 0 }\n  |                          ~',
  },
  {
    name: 'queue_ahead below 0',
    yaml: `${head}settings: { concurrency: 8, queue_ahead: -2 }\nsteps:\n  a: { run: echo }\n`,
    expected:
      'recipes/broken.yaml:3:42: error: settings.queue_ahead must be at least 0 (got -2)\n  |\n3 | settings: { concurrency: 8, queue_ahead: -2 }\n  |                                          ~~',
  },
  {
    name: 'input without type',
    yaml: `${head}inputs:\n  topic: { default: bikes }\nsteps:\n  a: { run: echo }\n`,
    expected:
      'recipes/broken.yaml:4:3: error: inputs.topic needs type\n  |\n4 |   topic: { default: bikes }\n  |   ~~~~~',
  },
  {
    name: 'input default of the wrong type',
    yaml: `${head}inputs:\n  count: { type: integer, default: three }\nsteps:\n  a: { run: echo }\n`,
    expected:
      'recipes/broken.yaml:4:36: error: the default of input \'count\' must be an integer, got "three"\n  |\n4 |   count: { type: integer, default: three }\n  |                                    ~~~~~',
  },
  {
    name: 'input default out of bounds',
    yaml: `${head}inputs:\n  count: { type: integer, default: 12, maximum: 9 }\nsteps:\n  a: { run: echo }\n`,
    expected:
      "recipes/broken.yaml:4:36: error: the default of input 'count' must be at most 9, got 12\n  |\n4 |   count: { type: integer, default: 12, maximum: 9 }\n  |                                    ~~",
  },
  {
    name: 'missing file default',
    yaml: `${head}inputs:\n  logo: { type: file, default: ./assets/nope.png }\nsteps:\n  a: { run: echo }\n`,
    expected:
      'recipes/broken.yaml:4:32: error: file ./assets/nope.png does not exist (looked for recipes/assets/nope.png)\n  |\n4 |   logo: { type: file, default: ./assets/nope.png }\n  |                                ~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'required input not given',
    yaml: `${head}inputs:\n  topic: { type: string }\nsteps:\n  a: { run: "echo \${{ inputs.topic }}" }\n`,
    expected:
      "recipes/broken.yaml:4:3: error: input 'topic' is required: give it with --set topic=…\n  |\n4 |   topic: { type: string }\n  |   ~~~~~",
  },
  {
    name: 'unknown --set input',
    yaml: `${head}inputs:\n  topic: { type: string, default: bikes }\nsteps:\n  a: { run: echo }\n`,
    sets: ['topci=cars'],
    expected:
      "command line:1:7: error: unknown input 'topci'; did you mean 'topic'? The inputs are topic\n  |\n1 | --set topci=cars\n  |       ~~~~~",
  },
  {
    name: 'a missing file given with --set, which a step uses: reported where it is given, once',
    yaml: `${head}inputs:\n  logo: { type: file }\nsteps:\n  a: { uses: vendor-b/vendor-b-5.0-lite-edit, with: { prompt: x, image: ["\${{ inputs.logo }}"], size: 2048x1152 } }\n`,
    sets: ['logo=no-such-logo.png'],
    expected:
      "command line:1:12: error: input 'logo' names a file that is missing or too large: no-such-logo.png does not exist (looked for no-such-logo.png)\n  |\n1 | --set logo=no-such-logo.png\n  |            ~~~~~~~~~~~~~~~~",
  },
  {
    name: '--set value of the wrong type',
    yaml: `${head}inputs:\n  count: { type: integer, default: 3 }\nsteps:\n  a: { run: echo }\n`,
    sets: ['count=lots'],
    expected:
      'command line:1:13: error: input \'count\' must be an integer, got "lots"\n  |\n1 | --set count=lots\n  |             ~~~~',
  },
  {
    name: '--set value outside the enum',
    yaml: `${head}inputs:\n  ratio: { type: string, default: "16:9", enum: ["16:9", "1:1"] }\nsteps:\n  a: { run: echo }\n`,
    sets: ['ratio=4:3'],
    expected:
      'command line:1:13: error: input \'ratio\' must be one of "16:9", "1:1", got "4:3"\n  |\n1 | --set ratio=4:3\n  |             ~~~',
  },
  {
    name: 'batch row out of bounds',
    yaml: `${head}inputs:\n  count: { type: integer, maximum: 9 }\nsteps:\n  a: { run: "echo \${{ inputs.count }}" }\n`,
    batch: { path: 'rows.csv', text: 'count\n3\n12\n' },
    expected: "rows.csv:3:1: error: input 'count' must be at most 9, got 12\n  |\n3 | 12\n  | ~~",
  },
  {
    name: 'batch row with an unknown column',
    yaml: `${head}inputs:\n  count: { type: integer, default: 1 }\nsteps:\n  a: { run: echo }\n`,
    batch: { path: 'rows.jsonl', text: '{"count": 2}\n{"cuont": 3}\n' },
    expected:
      "rows.jsonl:2:1: error: unknown input 'cuont' in the batch file; did you mean 'count'?\n  |\n2 | {\"cuont\": 3}\n  | ~~~~~~~~~~~~",
  },
  {
    name: 'unknown input in an expression',
    yaml: `${head}inputs:\n  topic: { type: string, default: bikes }\nsteps:\n  a: { run: "echo \${{ inputs.topc }}" }\n`,
    expected:
      "recipes/broken.yaml:6:19: error: unknown input 'topc'; did you mean 'topic'? The inputs are topic\n  |\n6 |   a: { run: \"echo ${{ inputs.topc }}\" }\n  |                   ~~~~~~~~~~~~~~~~~~",
  },
  {
    name: 'unknown input in a model field: that error alone, not the null it gives the model',
    yaml: `${head}inputs:\n  title: { type: string, default: x }\nsteps:\n  a: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: "\${{ inputs.titel }}", aspect_ratio: "1:1" } }\n`,
    expected:
      'recipes/broken.yaml:6:57: error: unknown input \'titel\'; did you mean \'title\'? The inputs are title\n  |\n6 |   a: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: "${{ inputs.titel }}", aspect_ratio: "1:1" } }\n  |                                                         ~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'item in the if of a step whose items do not flow',
    yaml: `${head}steps:\n  a: { for_each: [x, y], if: "\${{ item == 'x' }}", run: echo }\n`,
    expected:
      "recipes/broken.yaml:4:31: error: item is not available in this step's if: its condition is decided once for the whole step. It is decided per item, and may read item and index, where the step's items flow from an earlier step's items (for_each over steps.X.outputs, with item_flow on)\n  |\n4 |   a: { for_each: [x, y], if: \"${{ item == 'x' }}\", run: echo }\n  |                               ~~~~~~~~~~~~~~~~~~",
  },
  {
    name: 'unknown input in a model field of a batch: that error alone, not once more for each row',
    yaml: `${head}inputs:\n  title: { type: string }\nsteps:\n  a: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: "\${{ inputs.titel }}", aspect_ratio: "1:1" } }\n`,
    batch: { path: 'rows.csv', text: 'title\nx\ny\n' },
    expected:
      'recipes/broken.yaml:6:57: error: unknown input \'titel\'; did you mean \'title\'? The inputs are title\n  |\n6 |   a: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: "${{ inputs.titel }}", aspect_ratio: "1:1" } }\n  |                                                         ~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'unknown step in an expression',
    yaml: `${head}steps:\n  a: { run: "echo \${{ steps.nothing.outputs.stdout }}" }\n`,
    expected:
      'recipes/broken.yaml:4:19: error: unknown step \'nothing\'\n  |\n4 |   a: { run: "echo ${{ steps.nothing.outputs.stdout }}" }\n  |                   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'unknown output field',
    yaml: `${head}steps:\n  hero: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: cat } }\n  b: { run: "echo \${{ steps.hero.outputs.imagez }}" }\n`,
    expected:
      "recipes/broken.yaml:5:19: error: steps.hero.outputs has no field 'imagez'; did you mean 'images'? It has task_id, resources, images, videos, audio, url, path, metadata\n  |\n5 |   b: { run: \"echo ${{ steps.hero.outputs.imagez }}\" }\n  |                   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
  },
  {
    name: "a list field of a for_each step's items",
    yaml: `${head}steps:\n  t2i: { uses: vendor-a/vendor-a-v3-t2i, for_each: [red, blue], with: { prompt: "\${{ item }}" } }\n  edit: { run: "echo \${{ item }}", for_each: "\${{ steps.t2i.outputs.images }}" }\n`,
    expected:
      'recipes/broken.yaml:5:47: error: steps.t2i.outputs is a list; use steps.t2i.outputs[0].images for the first item\'s, steps.t2i.outputs[*].images[0] for the first of each item\'s, or steps.t2i.outputs[*].images for all of them in one list\n  |\n5 |   edit: { run: "echo ${{ item }}", for_each: "${{ steps.t2i.outputs.images }}" }\n  |                                               ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'field of a list',
    yaml: `${head}steps:\n  s: { uses: web-search, with: { query: cats } }\n  b: { run: "echo \${{ steps.s.outputs.results.url }}" }\n`,
    expected:
      'recipes/broken.yaml:5:19: error: steps.s.outputs.results is a list; use steps.s.outputs.results[0].url for the first item or steps.s.outputs.results[*].url for all\n  |\n5 |   b: { run: "echo ${{ steps.s.outputs.results.url }}" }\n  |                   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'step refers to itself',
    yaml: `${head}steps:\n  a: { run: "echo \${{ steps.a.outputs.stdout }}" }\n`,
    expected:
      'recipes/broken.yaml:4:19: error: step \'a\' cannot refer to its own outputs\n  |\n4 |   a: { run: "echo ${{ steps.a.outputs.stdout }}" }\n  |                   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'missing outputs segment',
    yaml: `${head}steps:\n  a: { run: echo }\n  b: { run: "echo \${{ steps.a.stdout }}" }\n`,
    expected:
      'recipes/broken.yaml:5:19: error: steps.a has no field \'stdout\'; did you mean steps.a.outputs.stdout? It has outputs, outcome, conclusion\n  |\n5 |   b: { run: "echo ${{ steps.a.stdout }}" }\n  |                   ~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'cycle of two steps',
    yaml: `${head}steps:\n  a: { run: "echo \${{ steps.b.outputs.stdout }}" }\n  b: { run: "echo \${{ steps.a.outputs.stdout }}" }\n`,
    expected:
      'recipes/broken.yaml:4:23: error: the steps form a cycle: a → b (steps.a.run refers to steps.b), b → a (steps.b.run refers to steps.a)\n  |\n4 |   a: { run: "echo ${{ steps.b.outputs.stdout }}" }\n  |                       ~~~~~~~',
  },
  {
    name: 'cycle through needs',
    yaml: `${head}steps:\n  a: { run: echo, needs: c }\n  b: { run: echo, needs: [a] }\n  c: { run: echo, needs: [b] }\n`,
    expected:
      'recipes/broken.yaml:4:26: error: the steps form a cycle: a → c (steps.a.needs names c), c → b (steps.c.needs[0] names b), b → a (steps.b.needs[0] names a)\n  |\n4 |   a: { run: echo, needs: c }\n  |                          ~',
  },
  {
    name: 'unknown step in needs',
    yaml: `${head}steps:\n  a: { run: echo, needs: [setup] }\n`,
    expected:
      "recipes/broken.yaml:4:27: error: unknown step 'setup' in needs\n  |\n4 |   a: { run: echo, needs: [setup] }\n  |                           ~~~~~",
  },
  {
    name: 'for_each over text',
    yaml: `${head}steps:\n  a: { run: echo }\n  b: { run: "echo \${{ item }}", for_each: "\${{ steps.a.outputs.stdout }}" }\n`,
    expected:
      'recipes/broken.yaml:5:43: error: for_each must give a list, but this is text\n  |\n5 |   b: { run: "echo ${{ item }}", for_each: "${{ steps.a.outputs.stdout }}" }\n  |                                           ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'for_each over a known non-list input',
    yaml: `${head}inputs:\n  topic: { type: string, default: bikes }\nsteps:\n  b: { run: "echo \${{ item }}", for_each: "\${{ inputs.topic }}" }\n`,
    expected:
      'recipes/broken.yaml:6:43: error: for_each must give a list, but this is text\n  |\n6 |   b: { run: "echo ${{ item }}", for_each: "${{ inputs.topic }}" }\n  |                                           ~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'for_each over the items of a step with a projection that gives several values per item',
    yaml: `${head}steps:\n  bg: { uses: vendor-a/vendor-a-v3-t2i, for_each: [red, blue], with: { prompt: "\${{ item }}" } }\n  badge: { run: "echo \${{ item }}", for_each: "\${{ steps.bg.outputs[*].images[*].url }}" }\n`,
    expected:
      'recipes/broken.yaml:5:47: error: for_each over the items of bg must give one value per item, but steps.bg.outputs[*].images[*].url can give several per item ([*] flattens lists), so badge[i] would not match bg[i]; take one per item, as in steps.bg.outputs[*].images[0].url\n  |\n5 |   badge: { run: "echo ${{ item }}", for_each: "${{ steps.bg.outputs[*].images[*].url }}" }\n  |                                               ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: "an item's if reading the outcome of a step it does not descend from",
    yaml: `${head}steps:\n  bg: { run: "echo \${{ item }}", for_each: [red, blue] }\n  other: { run: "echo \${{ item }}", for_each: [a, b] }\n  badge: { run: "echo \${{ item.stdout }}", for_each: "\${{ steps.bg.outputs }}", if: "steps.other.outcome == 'success'" }\n`,
    expected:
      'recipes/broken.yaml:6:85: error: steps.other.outcome in an item\'s if: badge[i] descends from bg[i], not from an item of other; read the outcome of a step in its lineage, or add needs: other to wait for all of other and read the outcome of the whole step\n  |\n6 |   badge: { run: "echo ${{ item.stdout }}", for_each: "${{ steps.bg.outputs }}", if: "steps.other.outcome == \'success\'" }\n  |                                                                                     ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'an item of a step past its known count',
    yaml: `${head}steps:\n  bg: { run: "echo \${{ item }}", for_each: [red, blue] }\n  pick: { run: "echo \${{ steps.bg.outputs[5].stdout }}" }\n`,
    expected:
      'recipes/broken.yaml:5:22: error: steps.bg.outputs[5] reads item 5 of bg, which has 2 items, bg[0] to bg[1]\n  |\n5 |   pick: { run: "echo ${{ steps.bg.outputs[5].stdout }}" }\n  |                      ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'item outside for_each',
    yaml: `${head}steps:\n  a: { run: "echo \${{ item }}" }\n`,
    expected:
      'recipes/broken.yaml:4:19: error: item is defined only in a step with for_each\n  |\n4 |   a: { run: "echo ${{ item }}" }\n  |                   ~~~~~~~~~~~',
  },
  {
    name: 'expression syntax error in a media field: that error alone, no file looked for',
    yaml: `${head}steps:\n  a: { uses: vendor-b/vendor-b-5.0-lite-edit, with: { prompt: x, image: ["\${{ inputs.url ==  }}"], size: 2048x1152 } }\n`,
    expected:
      'recipes/broken.yaml:4:75: error: invalid expression: \'==\' needs a value on its right\n  |\n4 |   a: { uses: vendor-b/vendor-b-5.0-lite-edit, with: { prompt: x, image: ["${{ inputs.url ==  }}"], size: 2048x1152 } }\n  |                                                                           ~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'expression syntax error',
    yaml: `${head}steps:\n  a: { run: "echo \${{ steps.a.outputs[ }}" }\n`,
    expected:
      'recipes/broken.yaml:4:19: error: invalid expression: expected an index, a quoted key or * inside [ ]\n  |\n4 |   a: { run: "echo ${{ steps.a.outputs[ }}" }\n  |                   ~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'unterminated expression',
    yaml: `${head}steps:\n  a: { run: "echo \${{ inputs.topic" }\n`,
    expected:
      "recipes/broken.yaml:4:19: error: invalid expression: '${{' without a closing '}}'\n  |\n4 |   a: { run: \"echo ${{ inputs.topic\" }\n  |                   ~~~~~~~~~~~~~~~~",
  },
  {
    name: 'unknown function',
    yaml: `${head}steps:\n  a: { run: "echo \${{ upper('x') }}" }\n`,
    expected:
      "recipes/broken.yaml:4:19: error: invalid expression: unknown function 'upper'; the functions are join, json, length, default, slice, contains, startsWith, endsWith, format, toJSON, fromJSON, hashFiles, success, failure, always, cancelled\n  |\n4 |   a: { run: \"echo ${{ upper('x') }}\" }\n  |                   ~~~~~~~~~~~~~~~~~",
  },
  {
    name: 'wrong argument count',
    yaml: `${head}steps:\n  a: { run: "echo \${{ join() }}" }\n`,
    expected:
      'recipes/broken.yaml:4:19: error: invalid expression: join() takes 1 to 2 arguments, got 0\n  |\n4 |   a: { run: "echo ${{ join() }}" }\n  |                   ~~~~~~~~~~~~~',
  },
  {
    name: 'the API key in an expression',
    yaml: `${head}steps:\n  a: { run: "echo \${{ env.PIPELINE_API_KEY }}" }\n`,
    expected:
      'recipes/broken.yaml:4:19: error: env.PIPELINE_API_KEY is a credential of pipeline\'s own and cannot be used in a recipe\n  |\n4 |   a: { run: "echo ${{ env.PIPELINE_API_KEY }}" }\n  |                   ~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'the whole environment in an expression',
    yaml: `${head}steps:\n  a: { run: "echo \${{ toJSON(env) }}" }\n`,
    expected:
      'recipes/broken.yaml:4:19: error: env is read by name, as env.NAME: the whole environment could carry every variable of this machine (a CI job\'s tokens among them) into the outputs\n  |\n4 |   a: { run: "echo ${{ toJSON(env) }}" }\n  |                   ~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'an unquoted expression inside a flow map',
    yaml: `${head}steps:\n  a: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: a \${{ run.id }} kite } }\n`,
    expected:
      "recipes/broken.yaml:4:58: error: inside { … } or [ … ], put a value with an expression in quotes, the whole value: unquoted, the braces of ${{ run.id }} are read as YAML's\n  |\n4 |   a: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: a ${{ run.id }} kite } }\n  |                                                          ~~~~~~~~~~~~~",
  },
  {
    name: 'an expression after a # in a value without quotes',
    yaml: `${head}steps:\n  a: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: "x" } }\n  b:\n    run: echo colour #ff0000 for \${{ run.id }}\n`,
    expected:
      'recipes/broken.yaml:6:22: error: this comment holds an expression: in a value without quotes, " #" begins a YAML comment and the value ends before it. Put the whole value in quotes\n  |\n6 |     run: echo colour #ff0000 for ${{ run.id }}\n  |                      ~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'a video in an image field',
    yaml: `${head}steps:\n  e: { uses: vendor-b/vendor-b-5.0-lite-edit, with: { prompt: frame it, image: [./assets/ride.mp4] } }\n`,
    expected:
      'recipes/broken.yaml:4:81: error: file ./assets/ride.mp4 is a video (.mp4); this field takes an image\n  |\n4 |   e: { uses: vendor-b/vendor-b-5.0-lite-edit, with: { prompt: frame it, image: [./assets/ride.mp4] } }\n  |                                                                                 ~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'an outcome compared with a value it never has',
    yaml: `${head}steps:\n  a: { run: "exit 3", continue_on_error: true }\n  b: { run: "echo fallback", if: "\${{ 'failed' == steps.a.outcome }}" }\n`,
    expected:
      "recipes/broken.yaml:5:35: error: steps.a.outcome is one of success, failure, cancelled, skipped, never 'failed'; did you mean 'failure'?\n  |\n5 |   b: { run: \"echo fallback\", if: \"${{ 'failed' == steps.a.outcome }}\" }\n  |                                   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
  },
  {
    name: 'format() with fewer values than its pattern reads',
    yaml: `${head}steps:\n  a: { run: "echo \${{ format('{0} and {1}', 'x') }}" }\n`,
    expected:
      "recipes/broken.yaml:4:19: error: format() has no value for {1}: it got 1 after the pattern\n  |\n4 |   a: { run: \"echo ${{ format('{0} and {1}', 'x') }}\" }\n  |                   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
  },
  {
    name: 'wrong enum value',
    yaml: t2i('{ prompt: cat, aspect_ratio: "5:4" }'),
    expected:
      'recipes/broken.yaml:6:40: error: aspect_ratio must be one of 16:9, 9:16, 1:1, 4:3, 3:4, 3:2, 2:3, 21:9; got "5:4" (vendor-a/vendor-a-v3-t2i)\n  |\n6 |     with: { prompt: cat, aspect_ratio: "5:4" }\n  |                                        ~~~~~',
  },
  {
    name: 'integer out of bounds',
    yaml: t2i('{ prompt: cat, n: 10 }'),
    expected:
      'recipes/broken.yaml:6:29: error: n must be at most 9, got 10 (vendor-a/vendor-a-v3-t2i)\n  |\n6 |     with: { prompt: cat, n: 10 }\n  |                             ~~',
  },
  {
    name: 'prompt over its limit',
    yaml: t2i(`{ prompt: "${'a'.repeat(2501)}" }`),
    expected:
      'recipes/broken.yaml:6:21: error: prompt must be at most 2500 characters, got 2501 (vendor-a/vendor-a-v3-t2i)\n  |\n6 |     with: { prompt: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…\n  |                     ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    // One mistake, one error: the model's schema judges a literal, the shape check only expressions.
    name: 'a literal of the wrong type for a model field',
    yaml: t2i('{ prompt: hi, n: two }'),
    expected:
      'recipes/broken.yaml:6:28: error: n must be an integer, got "two" (vendor-a/vendor-a-v3-t2i)\n  |\n6 |     with: { prompt: hi, n: two }\n  |                            ~~~',
  },
  {
    name: 'missing required model input',
    yaml: t2i('{ n: 2 }'),
    expected:
      'recipes/broken.yaml:6:5: error: prompt is required (vendor-a/vendor-a-v3-t2i)\n  |\n6 |     with: { n: 2 }\n  |     ~~~~',
  },
  {
    name: 'unknown model input',
    yaml: t2i('{ prompt: cat, aspect: "1:1" }'),
    expected:
      'recipes/broken.yaml:6:26: error: aspect is not an input of this model (vendor-a/vendor-a-v3-t2i)\n  |\n6 |     with: { prompt: cat, aspect: "1:1" }\n  |                          ~~~~~~',
  },
  {
    name: 'misspelt model input',
    yaml: t2i('{ prompt: cat, aspect_ration: "1:1" }'),
    expected:
      'recipes/broken.yaml:6:26: error: aspect_ration is not an input of this model (vendor-a/vendor-a-v3-t2i); did you mean \'aspect_ratio\'?\n  |\n6 |     with: { prompt: cat, aspect_ration: "1:1" }\n  |                          ~~~~~~~~~~~~~',
  },
  {
    name: 'model input from an input, out of bounds',
    yaml: `${head}inputs:\n  count: { type: integer, default: 12 }\nsteps:\n  hero:\n    uses: vendor-a/vendor-a-v3-t2i\n    with: { prompt: cat, n: "\${{ inputs.count }}" }\n`,
    expected:
      'recipes/broken.yaml:8:29: error: n must be at most 9, got 12 (vendor-a/vendor-a-v3-t2i)\n  |\n8 |     with: { prompt: cat, n: "${{ inputs.count }}" }\n  |                             ~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'too many images',
    yaml: `${head}steps:\n  edit:\n    uses: vendor-b/vendor-b-5.0-lite-edit\n    with:\n      prompt: brand it\n      image: [${Array.from({ length: 15 }, () => './assets/logo.png').join(', ')}]\n`,
    expected:
      'recipes/broken.yaml:8:14: error: image must have at most 14 items, got 15 (vendor-b/vendor-b-5.0-lite-edit)\n  |\n8 |       image: [./assets/logo.png, ./assets/logo.png, ./assets/logo.png, ./assets/logo.png, ./assets/logo.png, ./assets/lo…\n  |              ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'local file that does not exist',
    yaml: `${head}steps:\n  clip:\n    uses: vendor-b/vendor-b-2.0-mini-v2v\n    with: { video_urls: [./assets/missing.mp4] }\n`,
    expected:
      'recipes/broken.yaml:6:26: error: file ./assets/missing.mp4 does not exist (looked for recipes/assets/missing.mp4)\n  |\n6 |     with: { video_urls: [./assets/missing.mp4] }\n  |                          ~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'a missing file among the items of a for_each over a list input, and an item a model rejects',
    yaml: `${head}inputs:\n  pictures: { type: array, default: [./assets/logo.png, ./assets/gone.png] }\nsteps:\n  each:\n    uses: vendor-b/vendor-b-5.0-lite-edit\n    for_each: \${{ inputs.pictures }}\n    with: { prompt: blue, image: ["\${{ item }}"] }\n  sizes:\n    uses: vendor-a/vendor-a-v3-t2i\n    for_each: [1k, 3k]\n    with: { prompt: a kite, resolution: "\${{ item }}" }\n`,
    expected:
      'recipes/broken.yaml:9:35: error: file ./assets/gone.png does not exist (looked for recipes/assets/gone.png)\n  |\n9 |     with: { prompt: blue, image: ["${{ item }}"] }\n  |                                   ~~~~~~~~~~~~~\n\n' +
      'recipes/broken.yaml:13:41: error: resolution must be one of 1k, 2k; got "3k" (vendor-a/vendor-a-v3-t2i)\n   |\n13 |     with: { prompt: a kite, resolution: "${{ item }}" }\n   |                                         ~~~~~~~~~~~~~',
  },
  {
    name: 'a list where text is expected',
    yaml: `${head}steps:\n  s: { uses: web-search, with: { query: cats } }\n  hero:\n    uses: vendor-a/vendor-a-v3-t2i\n    with: { prompt: "\${{ steps.s.outputs.results }}" }\n`,
    expected:
      'recipes/broken.yaml:7:21: error: prompt takes text, but this gives a list\n  |\n7 |     with: { prompt: "${{ steps.s.outputs.results }}" }\n  |                     ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'llm without a model provider',
    yaml: `${head}steps:\n  brief: { uses: llm, with: { model: writer, prompt: hi } }\n`,
    expected:
      'recipes/broken.yaml:4:38: error: model must be a model id of the form provider/name; got "writer"\n  |\n4 |   brief: { uses: llm, with: { model: writer, prompt: hi } }\n  |                                      ~~~~~~',
  },
  {
    name: 'llm with an invalid schema',
    yaml: `${head}steps:\n  brief: { uses: llm, with: { model: a/b, prompt: hi, schema: { type: nonsense } } }\n`,
    expected:
      'recipes/broken.yaml:4:71: error: schema is not a valid JSON Schema: type must be equal to one of the allowed values (array, boolean, integer, null, number, object, string)\n  |\n4 |   brief: { uses: llm, with: { model: a/b, prompt: hi, schema: { type: nonsense } } }\n  |                                                                       ~~~~~~~~',
  },
  {
    name: 'llm schema with a typo beside an expression (checked all the same)',
    yaml: `${head}inputs:\n  n: { type: integer, default: 3 }\nsteps:\n  brief:\n    uses: llm\n    with:\n      model: a/b\n      prompt: hi\n      schema: { type: object, properties: { p: { type: arrray, maxItems: "\${{ inputs.n }}" } } }\n`,
    expected:
      'recipes/broken.yaml:11:56: error: schema is not a valid JSON Schema: type must be equal to one of the allowed values (array, boolean, integer, null, number, object, string)\n   |\n11 |       schema: { type: object, properties: { p: { type: arrray, maxItems: "${{ inputs.n }}" } } }\n   |                                                        ~~~~~~',
  },
  {
    name: 'llm schema that no answer can match',
    yaml: `${head}steps:\n  brief: { uses: llm, with: { model: a/b, prompt: hi, schema: { type: array, minItems: 3, maxItems: 2 } } }\n`,
    expected:
      'recipes/broken.yaml:4:88: error: minItems 3 is more than maxItems 2: no answer can match this schema, and each try would be paid\n  |\n4 |   brief: { uses: llm, with: { model: a/b, prompt: hi, schema: { type: array, minItems: 3, maxItems: 2 } } }\n  |                                                                                        ~',
  },
  {
    name: 'llm temperature over what the messages protocol takes',
    yaml: `${head}steps:\n  brief: { uses: llm, with: { model: a/b, prompt: hi, protocol: messages, temperature: 1.5 } }\n`,
    expected:
      'recipes/broken.yaml:4:88: error: temperature 1.5 is over 1, the most the messages protocol takes (chat and responses take up to 2)\n  |\n4 |   brief: { uses: llm, with: { model: a/b, prompt: hi, protocol: messages, temperature: 1.5 } }\n  |                                                                                        ~~~',
  },
  {
    name: 'web-search without a query',
    yaml: `${head}steps:\n  s: { uses: web-search, with: { depth: rich } }\n`,
    expected:
      'recipes/broken.yaml:4:26: error: query is required\n  |\n4 |   s: { uses: web-search, with: { depth: rich } }\n  |                          ~~~~',
  },
  {
    name: 'with on a run step',
    yaml: `${head}steps:\n  a: { run: echo, with: { x: 1 } }\n`,
    expected:
      'recipes/broken.yaml:4:19: error: with gives inputs to an action; a run step has none\n  |\n4 |   a: { run: echo, with: { x: 1 } }\n  |                   ~~~~',
  },
  {
    name: 'unknown field in outputs',
    yaml: `${head}steps:\n  a: { run: echo }\noutputs:\n  out: "\${{ steps.a.outputs.stdot }}"\n`,
    expected:
      "recipes/broken.yaml:6:9: error: steps.a.outputs has no field 'stdot'; did you mean 'stdout'? It has stdout, stderr, exit_code, json\n  |\n6 |   out: \"${{ steps.a.outputs.stdot }}\"\n  |         ~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
  },
  // The gateway answers 400 to more than 50 domains; the analyzer reads the same request schema.
  {
    name: 'web-search with 51 include_domains',
    yaml: `${head}steps:\n  s:\n    uses: web-search\n    with:\n      query: cats\n      include_domains:\n${Array.from({ length: 51 }, (_, i) => `        - d${i}.example\n`).join('')}`,
    expected:
      'recipes/broken.yaml:9:9: error: include_domains must have at most 50 items, got 51\n  |\n9 |         - d0.example\n  |         ~~~~~~~~~~~~',
  },
  {
    name: 'step with no value',
    yaml: `${head}steps:\n  a:\n`,
    expected: 'recipes/broken.yaml:4:5: error: steps.a must be a mapping, got nothing\n  |\n4 |   a:\n  |     ~',
  },
  {
    name: 'step that is a number',
    yaml: `${head}steps:\n  a: 5\n`,
    expected: 'recipes/broken.yaml:4:6: error: steps.a must be a mapping, got 5\n  |\n4 |   a: 5\n  |      ~',
  },
  {
    name: '--set of an inherited property name',
    yaml: `${head}inputs:\n  topic: { type: string, default: bikes }\nsteps:\n  a: { run: echo }\n`,
    sets: ['__proto__=1', 'toString=2'],
    expected:
      "command line:1:7: error: unknown input '__proto__'; the inputs are topic\n  |\n1 | --set __proto__=1 --set toString=2\n  |       ~~~~~~~~~\n\ncommand line:1:25: error: unknown input 'toString'; the inputs are topic\n  |\n1 | --set __proto__=1 --set toString=2\n  |                         ~~~~~~~~",
  },
  {
    name: 'an inherited property name as an input',
    yaml: `${head}inputs:\n  topic: { type: string, default: bikes }\nsteps:\n  a: { run: "echo \${{ inputs.toString }}" }\n`,
    expected:
      'recipes/broken.yaml:6:19: error: unknown input \'toString\'; the inputs are topic\n  |\n6 |   a: { run: "echo ${{ inputs.toString }}" }\n  |                   ~~~~~~~~~~~~~~~~~~~~~~',
  },
  {
    name: 'cache of the wrong shape',
    yaml: `${head}steps:\n  a: { run: echo, cache: "yes please" }\n`,
    expected:
      'recipes/broken.yaml:4:26: error: steps.a.cache must be true, false, or a mapping such as { ttl: 7d, key: "${{ inputs.version }}" }\n  |\n4 |   a: { run: echo, cache: "yes please" }\n  |                          ~~~~~~~~~~~~',
  },
  {
    name: 'unknown key in settings, listing the keys settings has',
    yaml: `${head}settings: { colour: red }\nsteps:\n  a: { run: echo }\n`,
    expected:
      "recipes/broken.yaml:3:13: error: unknown key 'colour' in settings; settings has concurrency, queue_ahead, rpm, retries, timeout, poll, item_flow, cache, cache_remote, max_cost, prices, pass_env\n  |\n3 | settings: { colour: red }\n  |             ~~~~~~",
  },
  {
    name: 'cache ttl that is no duration',
    yaml: `${head}steps:\n  b: { uses: web-search, with: { query: x }, cache: { ttl: soon } }\n`,
    expected:
      'recipes/broken.yaml:4:60: error: steps.b.cache.ttl must be a duration such as 12h or 7d\n  |\n4 |   b: { uses: web-search, with: { query: x }, cache: { ttl: soon } }\n  |                                                            ~~~~',
  },
];
