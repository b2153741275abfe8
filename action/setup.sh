#!/usr/bin/env bash
# Prints (for $GITHUB_OUTPUT) where the run keeps its files, the step cache's actions/cache key,
# and the artifact's name.
#
# The key changes whenever the recipe, a local file it reads (as `pipeline validate --json` lists
# them, with the args' --set and --batch), the batch file, the arguments, the gateway
# (PIPELINE_BASE_URL: the step cache keeps each gateway's entries apart) or the tool's version
# change, so that a run that made something new saves a new cache; the
# prefix, shared by every key of this recipe, restores the newest earlier one. The step cache is
# content-addressed: a cache restored under an older key is still right, only perhaps incomplete.
set -euo pipefail
cd "${GITHUB_WORKSPACE:-.}"
# sha256sum where there is one (Linux, Windows' Git Bash), else shasum (macOS).
if command -v sha256sum > /dev/null; then sha=(sha256sum); else sha=(shasum -a 256); fi
home="${PIPELINE_HOME:-$PWD/.pipeline}"
cache_dir="${PIPELINE_CACHE_DIR:-$home/cache}"
# The words of the action's args as run.sh splits them, and of those the ones that choose the
# recipe's inputs, which validate takes too: a file given as `--set logo=art/logo-v2.png` or a
# `--batch` file's rows are read by the run, so their bytes are part of the key.
# (Args with an unclosed quote give no words here; run.sh refuses them and says why.)
args=()
while IFS= read -r -d '' word; do args+=("$word"); done < <(node "$GITHUB_ACTION_PATH/action/words.mjs" "${INPUT_ARGS:-}" 2> /dev/null)
inputs=()
batch=''
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --set | --batch)
      inputs+=("${args[i]}" "${args[i + 1]:-}")
      if [ "${args[i]}" = --batch ]; then batch="${args[i + 1]:-}"; fi
      i=$((i + 1))
      ;;
    --set=* | --skip-invalid-rows) inputs+=("${args[i]}") ;;
    --batch=*)
      inputs+=("${args[i]}")
      batch="${args[i]#--batch=}"
      ;;
  esac
done
# NUL-separated paths, relative to the workspace; none for an invalid recipe (the run reports it,
# with exit 2 and a job summary: no annotations here, hence GITHUB_ACTIONS is unset).
local_files() {
  GITHUB_ACTIONS='' node "$GITHUB_ACTION_PATH/dist/cli/main.js" validate "$INPUT_RECIPE" ${inputs[@]+"${inputs[@]}"} --json 2> /dev/null |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      try { for (const f of JSON.parse(s).local_files ?? []) process.stdout.write(`${f}\0`); } catch {}
    })' || true
}
recipe_id=$(printf '%s' "$INPUT_RECIPE" | "${sha[@]}" | cut -c1-12)
content=$(
  {
    if [ -f "$INPUT_RECIPE" ]; then "${sha[@]}" "$INPUT_RECIPE"; fi
    local_files | xargs -0 -r "${sha[@]}"
    if [ -n "$batch" ] && [ -f "$batch" ]; then "${sha[@]}" "$batch"; fi
    printf '%s\n' "${INPUT_ARGS:-}"
    # Hashed, never printed: a URL may carry a user and password.
    printf 'gateway %s\n' "${PIPELINE_BASE_URL:-}"
    node -p 'require(process.argv[1]).version' "$GITHUB_ACTION_PATH/package.json"
  } | "${sha[@]}" | cut -c1-64
)
prefix="pipeline-steps-${RUNNER_OS:-unknown}-$recipe_id-"
name="${INPUT_ARTIFACT_NAME:-pipeline-$(basename "${INPUT_RECIPE%.*}")}"
echo "home=$home"
echo "cache-dir=$cache_dir"
echo "cache-prefix=$prefix"
echo "cache-key=$prefix$content"
echo "artifact-name=$name"
