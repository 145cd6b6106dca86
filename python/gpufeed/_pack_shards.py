"""gpufeed.pack(..., shard_size=, part=): a directory of shard files and its manifest.json, as
h5pack convert --shard-size / --part writes it. The stored order is drawn over the whole dataset
first and each shard packs a slice of it (classes mix across the dataset, not within a shard).
A shard appears only whole (each is written atomically), is opened again and counted once
written, and a pack run again keeps the shards already whole: an interrupted pack goes on from
its last whole shard. Parts packed by independent processes join in one manifest, written by
whichever finishes last."""

import array
import hashlib
import json
import os
import re
from typing import Any, Callable, List, Optional, Union

from . import _native

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def byte_size(size: Union[int, str], keyword: str = "shard_size") -> int:
    """``4_000_000_000``, ``"4GB"`` (10^9), ``"4GiB"`` (2^30), ``"512MB"``: bytes."""
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return size
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(size))
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _UNITS or float(match.group(1)) <= 0:
        raise _native.UsageError(f"gpufeed.pack: {keyword}={size!r}: give bytes, or a size such "
                                 "as \"4GB\" or \"512MiB\"")
    return int(float(match.group(1)) * _UNITS[unit])


def _part(part: Optional[str]) -> tuple:
    if part is None:
        return 0, 1
    match = re.fullmatch(r"(\d+)/(\d+)", str(part))
    if match is None or int(match.group(2)) == 0 or int(match.group(1)) >= int(match.group(2)):
        raise _native.UsageError(f"gpufeed.pack: part={part!r}: give \"I/N\" with I below N, "
                                 "as \"0/2\" and \"1/2\"")
    return int(match.group(1)), int(match.group(2))


PREFIXES = 16


def shard_name(shard: int, shards: int) -> str:
    """h5pack's layout: shards under 16 prefix folders in turn ("03/shard-00019-of-00330.h5"),
    so that an object store's GETs spread over as many key prefixes; one shard in `path`."""
    if shards == 1:
        return "shard-00000-of-00001.h5"
    return f"{shard % min(PREFIXES, shards):02d}/shard-{shard:05d}-of-{shards:05d}.h5"


def _whole(path: str, planned: int) -> bool:
    if not os.path.exists(path):
        return False
    try:
        return _native.shard_samples(path)[1] == planned
    except _native.Error:
        return False  # damaged: packed again


def _join_if_complete(path: str, shards: int) -> bool:
    names = [shard_name(k, shards) for k in range(shards)]
    if not all(os.path.exists(os.path.join(path, name)) for name in names):
        return False
    text = _native.manifest_text(path, names)
    manifest = os.path.join(path, "manifest.json")
    temporary = f"{manifest}.tmp.{os.getpid()}"
    with open(temporary, "w") as out:
        out.write(text)
    os.replace(temporary, manifest)  # two parts finishing together write the same text
    return True


def pack_shards(path: str, order: List[int], sample_bytes: int, shard_size: Union[int, str, None],
                part: Optional[str], chunk: int, pack_one: Callable[[str, List[int]], Any]) -> str:
    """Packs this part's shards of `order` (dataset indices in the stored order) under `path`
    with ``pack_one(shard_path, indices)``; returns `path`. A shard of more than one chunk of
    `chunk` samples (1: a layout without fixed chunks) holds whole chunks, its size rounded up
    by less than a chunk: HDF5 stores a short chunk at its full size."""
    per = len(order)
    if shard_size is not None:
        per = max(1, byte_size(shard_size) // max(1, sample_bytes))
        if per > chunk:
            per = -(-per // chunk) * chunk
    shards = (len(order) + per - 1) // per
    index, parts = _part(part)
    if os.path.exists(path) and not os.path.isdir(path):
        raise _native.UsageError(f"gpufeed.pack: {path} is a file; shard_size= and part= write "
                                 "a directory of shards")
    os.makedirs(path, exist_ok=True)
    # The order by its digest: the seed and keep_order as they drew it, over these items.
    digest = hashlib.sha256()
    for i in range(0, len(order), 1 << 20):
        digest.update(array.array("Q", order[i:i + (1 << 20)]).tobytes())
    # Shards kept from a pack of another plan would hold samples twice and lose others.
    plan = {"samples": len(order), "order": digest.hexdigest()[:16], "shard_samples": per,
            "shards": shards}
    try:
        _native.keep_pack_plan(path, json.dumps(plan))
    except _native.UsageError as e:
        raise _native.UsageError(f"gpufeed.pack: {e}") from None
    for k in range(index, shards, parts):
        target = os.path.join(path, shard_name(k, shards))
        planned = order[k * per:(k + 1) * per]
        if _whole(target, len(planned)):
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        _native.remove_stale_temporaries(target)  # what a killed pack left of this shard
        pack_one(target, planned)
        layout, samples = _native.shard_samples(target)  # read back as the Loader will
        if samples != len(planned):
            raise _native.FormatError(f"gpufeed.pack: {target} holds {samples} samples after "
                                      f"packing {len(planned)}; pack it again")
    _join_if_complete(path, shards)
    return path
