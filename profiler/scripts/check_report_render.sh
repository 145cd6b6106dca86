#!/usr/bin/env bash
# Renders an HTML report in headless Chromium and fails when the screenshot is blank.
#
#   check_report_render.sh REPORT.html [SCREENSHOT.png]
#   check_report_render.sh --generate SAMPLE_EXE [SCREENSHOT.png]   (SAMPLE_EXE writes the HTML)
#
# Exit codes: 0 rendered with content, 1 failure, 77 no Chromium installed (ctest SKIP).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z "$browser" ]]; then
  echo "SKIP: no chromium in PATH (Debian: apt-get install chromium)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ "${1:-}" == "--generate" ]]; then
  "$2" "$work/report.html"
  html="$work/report.html"
  shot_out=${3:-}
else
  html=$(realpath "$1")
  shot_out=${2:-}
fi
# --no-sandbox: CI containers run as root; a private profile dir keeps runs independent.
if ! timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$work/profile" --window-size=1280,1600 \
    --screenshot="$work/shot.png" "file://$html" >"$work/browser.log" 2>&1; then
  echo "chromium failed to render $html:"
  tail -20 "$work/browser.log"
  exit 1
fi
if [[ ! -s "$work/shot.png" ]]; then
  echo "chromium wrote no screenshot for $html"
  tail -20 "$work/browser.log"
  exit 1
fi
[[ -n "$shot_out" ]] && cp "$work/shot.png" "$shot_out"
python3 "$here/png_colors.py" "$work/shot.png" --min-colors 8 --min-nonwhite 0.05
