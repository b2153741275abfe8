#!/usr/bin/env bash
# Prints key= and paths= (for $GITHUB_OUTPUT) of the tool's install in the action's checkout:
# node_modules and dist, keyed on the OS, node's version and every file the install and the build
# read. hashFiles() cannot do this: it reads only the workspace, and the action is not in it.
set -euo pipefail
cd "$GITHUB_ACTION_PATH"
# sha256sum where there is one (Linux, Windows' Git Bash), else shasum (macOS).
if command -v sha256sum > /dev/null; then sha=(sha256sum); else sha=(shasum -a 256); fi
hash=$(
  {
    find src schemas -type f -print0 | LC_ALL=C sort -z | xargs -0 "${sha[@]}"
    "${sha[@]}" package.json package-lock.json tsconfig.json tsconfig.build.json
  } | "${sha[@]}" | cut -c1-64
)
echo "key=media-pipeline-tool-${RUNNER_OS:-unknown}-$(node --version)-$hash"
echo "paths<<MEDIA_PIPELINE_PATHS"
echo "$GITHUB_ACTION_PATH/node_modules"
echo "$GITHUB_ACTION_PATH/dist"
echo "MEDIA_PIPELINE_PATHS"
