#!/usr/bin/env bash
# Runs the recipe with the tool this action built, prints its JSON answer, writes the action's
# outputs, and ends with the run's exit code (0 succeeded, 1 failed, 2 invalid input, 3 stopped for money, 130 interrupted).
set -uo pipefail
# The key travels in the environment only: a command line is visible to every process on the machine.
if [ -n "${INPUT_API_KEY:-}" ]; then export PIPELINE_API_KEY="$INPUT_API_KEY"; fi
unset INPUT_API_KEY
# Words as a shell splits them (quotes group), without expanding anything: xargs does just that.
# (Not with blank input: xargs would still run printf once, making one empty word.)
args=()
if [[ $INPUT_ARGS =~ [^[:space:]] ]]; then
  while IFS= read -r -d '' word; do args+=("$word"); done < <(printf '%s' "$INPUT_ARGS" | xargs printf '%s\0')
fi
if [ -n "$INPUT_MAX_COST" ]; then args+=(--max-cost "$INPUT_MAX_COST"); fi
answer="${RUNNER_TEMP:-/tmp}/media-pipeline-$$.json"
cd "${GITHUB_WORKSPACE:-.}"
node "$GITHUB_ACTION_PATH/dist/cli/main.js" run "$INPUT_RECIPE" ${args[@]+"${args[@]}"} --json > "$answer"
code=$?
cat "$answer"
node "$GITHUB_ACTION_PATH/action/outputs.mjs" "$answer" "$code" >> "$GITHUB_OUTPUT"
exit "$code"
