#!/usr/bin/env bash
# Rewrites docs/serve.md's table of settings from the settings' rows
# (Sources/WebImageServer/Settings), which ServerSettingsTests.documented checks it against.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/traits.sh
WEBIMAGE_WRITE_SETTINGS_TABLE=1 swift test "${debug_traits[@]}" --filter 'ServerSettingsTests/documented'
