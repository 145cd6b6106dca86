"""Synthetic datasets: pipebench's embedded data, for trying the loader without a dataset."""

from __future__ import annotations

import os
from typing import Tuple, Union

from . import _native


def write_synthetic(
    path: Union[str, "os.PathLike[str]"],
    samples: int = 8192,
    shape: Tuple[int, int, int] = (64, 64, 3),
    *,
    chunk: int = 64,
    seed: int = 0,
    classes: int = 10,
) -> str:
    """Writes ``samples`` image-like uint8 samples of ``shape`` (height, width, channels) with
    labels in ``range(classes)`` to a schema v1 file at ``path``, ``chunk`` samples per chunk:
    the same bytes on every machine for the same seed. Returns the path."""
    height, width, channels = shape
    path = os.fspath(path)
    _native.write_synthetic(path, samples, height, width, channels, chunk, seed, classes)
    return path
