#!/usr/bin/env bash
# gpufeed.profile's HTML report, with its whole-run section (the run plotted over time, a trend
# named), renders in headless Chromium with content.
#
#   profile_report_render.sh PYTHON CHECK_SCRIPT [SCREENSHOT.png]
#
# Exit codes: 0 rendered, 1 failure, 77 no Chromium (ctest SKIP).
set -euo pipefail
python=$1
check=$2
shot=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" - "$work/report.html" <<'PY'
import sys, time
import torch
from torch.utils.data import DataLoader, Dataset
import gpufeed

class Items(Dataset):
    cost_s = 0.001
    def __len__(self):
        return 64
    def __getitem__(self, index):
        time.sleep(self.cost_s)
        return torch.zeros(3, 8, 8), index

dataset = Items()
with gpufeed.profile(report=sys.argv[1], measure_pack=False) as prof:
    for epoch in range(5):  # items that grow 1, 2, 3, 4, 5 ms: a trend
        dataset.cost_s = 0.001 * (epoch + 1)
        for _ in DataLoader(dataset, batch_size=8):
            time.sleep(0.002)
html = open(sys.argv[1]).read()
assert "The whole run over time" in html and "<polyline" in html, "no run section"
assert "grew epoch after epoch" in html, "no trend in the report"
print(prof.summary())
PY
status=0
"$check" "$work/report.html" ${shot:+"$shot"} || status=$?
exit "$status"
