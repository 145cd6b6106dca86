"""gpufeed.pack: any map-style Dataset of (image, label) into a gpufeed file, once, so that
gpufeed.Loader reads it at the disk's rate instead of paying the Dataset's cost every epoch."""

from __future__ import annotations

import os
import sys
from typing import Any, Optional, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


def _bad_item(dataset: Any, index: int, what: str) -> _native.FormatError:
    return _native.FormatError(
        f"gpufeed.pack: item {index} of {type(dataset).__name__} {what}; fix it in the dataset "
        "(or its transform) and pack again"
    )


def _as_hwc(dataset: Any, index: int, image: Any, channels_first: Optional[bool]) -> Any:
    """`image` (a uint8 array or tensor, HWC or CHW, or a PIL image) as a uint8 HWC array."""
    import numpy as np

    if hasattr(image, "getbands"):  # a PIL image
        image = np.asarray(image)
    elif hasattr(image, "detach"):  # a torch tensor
        image = image.detach().cpu().numpy()
    else:
        image = np.asarray(image)
    if image.dtype != np.uint8:
        raise _bad_item(dataset, index, f"is {image.dtype}, not uint8 pixels")
    if image.ndim == 2:
        image = image[:, :, None]
    if image.ndim != 3:
        raise _bad_item(dataset, index, f"has {image.ndim} dimensions, not an image's 2 or 3")
    if channels_first:
        image = image.transpose(1, 2, 0)
    return np.ascontiguousarray(image)


def _channels_first(image: Any) -> bool:
    """Whether a first image is CHW: a leading 1, 3 or 4 that the last dimension is not."""
    shape = tuple(getattr(image, "shape", ()))
    if hasattr(image, "getbands") or len(shape) != 3:
        return False
    return shape[0] in (1, 3, 4) and shape[2] not in (1, 3, 4)


def _label(dataset: Any, index: int, label: Any) -> int:
    try:
        return int(label)
    except (TypeError, ValueError):
        raise _bad_item(dataset, index, f"has the label {label!r}, not an int") from None


def pack(
    dataset: Any,
    path: PathLike,
    *,
    workers: int = 0,
    chunk: int = 64,
    progress: Optional[bool] = None,
) -> str:
    """Writes every item of a map-style ``dataset`` (``len()`` and ``[i]`` giving ``(image,
    label)``) to a gpufeed file at ``path`` (raw layout, ``chunk`` samples per chunk), for
    ``gpufeed.Loader(path)`` to read. An image is a uint8 array or tensor, HWC or CHW, or a PIL
    image; every one has the first one's shape. ``workers`` processes read the items (a torch
    DataLoader's workers; 0: this process). The file appears at ``path`` only once complete;
    a bad item raises ``gpufeed.FormatError`` naming its index, and nothing is left behind.
    ``progress`` (default: when stderr is a terminal) prints how far it got. Returns the path."""
    import numpy as np
    from torch.utils.data import DataLoader

    path = os.fspath(path)
    samples = len(dataset)
    if samples == 0:
        raise _native.UsageError(f"gpufeed.pack: {type(dataset).__name__} has no items")
    if chunk < 1:
        raise _native.UsageError(f"gpufeed.pack: chunk={chunk!r}: use 1 or more samples")
    first = dataset[0]
    if not isinstance(first, (tuple, list)) or len(first) != 2:
        raise _bad_item(dataset, 0, "is not an (image, label) pair")
    channels_first = _channels_first(first[0])
    height, width, channels = _as_hwc(dataset, 0, first[0], channels_first).shape
    writer = _native.PackWriter(path, samples, height, width, channels, chunk)
    show = sys.stderr.isatty() if progress is None else progress
    loader = DataLoader(dataset, batch_size=writer.samples_per_chunk, shuffle=False,
                        num_workers=workers, collate_fn=list)
    labels = np.empty(samples, dtype=np.int64)
    try:
        start = 0
        for index, items in enumerate(loader):
            pixels = np.empty((len(items), height, width, channels), dtype=np.uint8)
            for offset, item in enumerate(items):
                i = start + offset
                if not isinstance(item, (tuple, list)) or len(item) != 2:
                    raise _bad_item(dataset, i, "is not an (image, label) pair")
                image = _as_hwc(dataset, i, item[0], channels_first)
                if image.shape != pixels.shape[1:]:
                    raise _bad_item(dataset, i, f"is {'x'.join(map(str, image.shape))} (HWC), "
                                    f"not {height}x{width}x{channels} like item 0")
                pixels[offset] = image
                labels[i] = _label(dataset, i, item[1])
            writer.write_chunk(index, pixels)
            start += len(items)
            if show:
                print(f"\rgpufeed.pack {start}/{samples} samples", end="", file=sys.stderr)
        writer.write_labels(labels)
        writer.commit()
    except BaseException:
        writer.abort()  # the temporary file goes; nothing appears at `path`
        raise
    finally:
        if show:
            print(file=sys.stderr)
    return path
