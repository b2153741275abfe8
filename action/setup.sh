#!/usr/bin/env bash
# Prints (for $GITHUB_OUTPUT) where the run keeps its files, the step cache's actions/cache key,
# and the artifact's name.
#
# The key changes whenever the recipe, a file in its folder (its local assets, as far as they sit
# there) or the arguments change, so that a run that made something new saves a new cache; the
# prefix, shared by every key of this recipe, restores the newest earlier one. The step cache is
# content-addressed: a cache restored under an older key is still right, only perhaps incomplete.
set -euo pipefail
cd "${GITHUB_WORKSPACE:-.}"
home="${PIPELINE_HOME:-$PWD/.pipeline}"
cache_dir="${PIPELINE_CACHE_DIR:-$home/cache}"
folder=$(dirname "$INPUT_RECIPE")
recipe_id=$(printf '%s' "$INPUT_RECIPE" | sha256sum | cut -c1-12)
content=$(
  {
    # A missing recipe is the run's to report (exit 2, with a summary); the key does not matter then.
    if [ -f "$INPUT_RECIPE" ]; then
      find "$folder" \( -name .git -o -name .pipeline -o -name node_modules \) -prune -o -type f -print0 |
        LC_ALL=C sort -z | xargs -0 -r sha256sum
    fi
    printf '%s\n' "$INPUT_ARGS"
  } | sha256sum | cut -c1-64
)
prefix="pipeline-steps-${RUNNER_OS:-unknown}-$recipe_id-"
name="${INPUT_ARTIFACT_NAME:-pipeline-$(basename "${INPUT_RECIPE%.*}")}"
echo "home=$home"
echo "cache-dir=$cache_dir"
echo "cache-prefix=$prefix"
echo "cache-key=$prefix$content"
echo "artifact-name=$name"
