#!/usr/bin/env bash
# Prints (for $GITHUB_OUTPUT) where the run keeps its files, the step cache's actions/cache key,
# and the artifact's name.
#
# The key changes whenever the recipe, a local file it reads (as `pipeline validate --json` lists
# them) or the arguments change, so that a run that made something new saves a new cache; the
# prefix, shared by every key of this recipe, restores the newest earlier one. The step cache is
# content-addressed: a cache restored under an older key is still right, only perhaps incomplete.
set -euo pipefail
cd "${GITHUB_WORKSPACE:-.}"
# sha256sum where there is one (Linux, Windows' Git Bash), else shasum (macOS).
if command -v sha256sum > /dev/null; then sha=(sha256sum); else sha=(shasum -a 256); fi
home="${PIPELINE_HOME:-$PWD/.pipeline}"
cache_dir="${PIPELINE_CACHE_DIR:-$home/cache}"
# NUL-separated paths, relative to the workspace; none for an invalid recipe (the run reports it,
# with exit 2 and a job summary: no annotations here, hence GITHUB_ACTIONS is unset).
local_files() {
  GITHUB_ACTIONS='' node "$GITHUB_ACTION_PATH/dist/cli/main.js" validate "$INPUT_RECIPE" --json 2> /dev/null |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      try { for (const f of JSON.parse(s).local_files ?? []) process.stdout.write(`${f}\0`); } catch {}
    })' || true
}
recipe_id=$(printf '%s' "$INPUT_RECIPE" | "${sha[@]}" | cut -c1-12)
content=$(
  {
    if [ -f "$INPUT_RECIPE" ]; then "${sha[@]}" "$INPUT_RECIPE"; fi
    local_files | xargs -0 -r "${sha[@]}"
    printf '%s\n' "$INPUT_ARGS"
  } | "${sha[@]}" | cut -c1-64
)
prefix="pipeline-steps-${RUNNER_OS:-unknown}-$recipe_id-"
name="${INPUT_ARTIFACT_NAME:-pipeline-$(basename "${INPUT_RECIPE%.*}")}"
echo "home=$home"
echo "cache-dir=$cache_dir"
echo "cache-prefix=$prefix"
echo "cache-key=$prefix$content"
echo "artifact-name=$name"
