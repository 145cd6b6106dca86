#!/usr/bin/env bash
# `pip install .` as a user runs it: a fresh venv that sees Debian's torch, the repository
# installed into it (build isolation fetches scikit-build-core and nanobind), then the package
# used from elsewhere: import, stubs, a short epoch into torch, and the scripts on PATH.
#   pip_install_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
source_dir=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
# Warnings are errors, as in the ci preset (whose compiled objects a compiler cache can reuse).
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --config-settings=cmake.define.GPUFEED_WERROR=ON "$source_dir"
cd "$work"
"$work/venv/bin/python" - <<'PY'
import os, gpufeed, torch
package = os.path.dirname(gpufeed.__file__)
assert "/venv/" in package, package
for name in ("py.typed", "_native.pyi"):
    assert os.path.exists(os.path.join(package, name)), name
path = gpufeed.write_synthetic("data.h5", 512, (16, 16, 3), chunk=32)
loader = gpufeed.Loader(path, batch_size=64, workers=2)
n = 0
for images, labels in loader.epoch(0):
    assert isinstance(images, torch.Tensor) and isinstance(labels, torch.Tensor)
    n += images.shape[0]
assert n == 512
print("installed package read", n, "samples")
PY
"$work/venv/bin/h5pack" info data.h5 >/dev/null
"$work/venv/bin/pipebench" analyze --help >/dev/null
echo "scripts h5pack and pipebench run"
