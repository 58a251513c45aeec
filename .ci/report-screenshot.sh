#!/usr/bin/env bash
# Regenerates docs/report.png: a headless Chromium screenshot of the report
# that `make demo` writes (demo-output/report.html). Run `make demo` first.
# Chromium is Debian's package: `bash .ci/install-tools.sh chromium`.
set -euo pipefail
cd "$(dirname "$0")/.."

page=${1:-demo-output/report.html}
shot=${2:-docs/report.png}
[ -f "$page" ] || { echo "no $page: run make demo first" >&2; exit 1; }
eval "$(bash .ci/install-tools.sh chromium)"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# A fresh profile and no background traffic: the page itself loads nothing.
"$CHROMIUM_BIN" --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
	--hide-scrollbars --window-size=1100,2600 --screenshot="$PWD/$shot" "file://$PWD/$page" 2>"$profile/chromium.log" ||
	{ cat "$profile/chromium.log" >&2; exit 1; }
echo "$shot"
