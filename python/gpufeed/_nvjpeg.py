"""Where the wheels of this environment keep libnvjpeg, for decode="gpu" and "auto": PyPI's
nvidia-nvjpeg, and the copies torchvision's and torch's wheels carry. Found without importing
torch or torchvision; told to the native loader once, before its own search (the library path
and the CUDA toolkit)."""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import List

from . import _native

_lock = threading.Lock()
_registered = False


def _package_dirs(name: str) -> List[str]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return list(spec.submodule_search_locations)


def candidate_dirs() -> List[str]:
    """The directories that may hold libnvjpeg.so.13, most specific first."""
    dirs = [os.path.join(d, "cu13", "lib") for d in _package_dirs("nvidia")]
    dirs += [os.path.join(d, "nvjpeg", "lib") for d in _package_dirs("nvidia")]
    for package in ("torchvision", "torch"):
        for d in _package_dirs(package):
            # auditwheel's copies sit beside the package (torchvision.libs) or in its lib/.
            dirs += [d.rstrip(os.sep) + ".libs", os.path.join(d, "lib")]
    return [d for d in dirs if os.path.isdir(d)]


def register() -> None:
    """Tells the native loader about candidate_dirs(), once per process."""
    global _registered
    with _lock:
        if _registered:
            return
        for d in candidate_dirs():
            _native.add_nvjpeg_library(d)
        _registered = True
