#!/usr/bin/env bash
# Runs pipebench with --report and checks that headless Chromium renders the page with content.
#
#   pipebench_report_render.sh PIPEBENCH SCRIPTS_DIR [SCREENSHOT.png]
#
# Uses the mlp training stage when this pipebench has one (a full diagnosis), else --model none.
# Exit codes: 0 rendered, 1 failure, 77 no Chromium (ctest SKIP).
set -euo pipefail
pipebench=$1
scripts=$2
shot=${3:-}
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null &&
    ! command -v google-chrome >/dev/null; then
  echo "SKIP: no chromium in PATH (Debian: apt-get install chromium)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {
  TMPDIR="$work" "$pipebench" --synthetic 1024:32x32x3 --batch 32 --epochs 2 --workers 1 \
    --inject-stall read:10@4 --report "$work/report.html" "$@" >"$work/out.txt" 2>&1
}
status=0
run --model mlp || status=$?
if [[ $status -eq 2 ]]; then  # a usage error: this pipebench has no mlp (no LibTorch)
  cat "$work/out.txt"
  status=0
  run --model none || status=$?
fi
if [[ $status -ne 0 ]]; then
  cat "$work/out.txt"
  exit 1
fi
cat "$work/out.txt"
status=0
"$scripts/check_report_render.sh" "$work/report.html" ${shot:+"$shot"} || status=$?
exit "$status"
