#!/usr/bin/env bash
# Runs the recipe with the tool this action built, prints its JSON answer, writes the action's
# outputs, and ends with the run's exit code (0 succeeded, 1 failed, 2 invalid input, 3 stopped for money, 130 interrupted).
set -uo pipefail
# The key travels in the environment only: a command line is visible to every process on the machine.
if [ -n "${INPUT_API_KEY:-}" ]; then export PIPELINE_API_KEY="$INPUT_API_KEY"; fi
unset INPUT_API_KEY
answer="${RUNNER_TEMP:-/tmp}/media-pipeline-$$.json"
# Words as a shell splits them (quotes group), without expanding anything. An unclosed quote runs
# nothing: words.mjs says where it is, and the run is refused (exit 2) rather than run with half
# of its arguments.
words="${RUNNER_TEMP:-/tmp}/media-pipeline-args-$$"
if ! node "$GITHUB_ACTION_PATH/action/words.mjs" "$INPUT_ARGS" --job-summary > "$words"; then
  printf '{"status":"refused"}\n' | tee "$answer"
  node "$GITHUB_ACTION_PATH/action/outputs.mjs" "$answer" 2 >> "$GITHUB_OUTPUT"
  exit 2
fi
args=()
while IFS= read -r -d '' word; do args+=("$word"); done < "$words"
if [ -n "$INPUT_MAX_COST" ]; then args+=(--max-cost "$INPUT_MAX_COST"); fi
cd "${GITHUB_WORKSPACE:-.}"
node "$GITHUB_ACTION_PATH/dist/cli/main.js" run "$INPUT_RECIPE" ${args[@]+"${args[@]}"} --json > "$answer"
code=$?
cat "$answer"
node "$GITHUB_ACTION_PATH/action/outputs.mjs" "$answer" "$code" >> "$GITHUB_OUTPUT"
rm -f "$words"
exit "$code"
