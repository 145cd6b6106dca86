"""gpufeed.pack: any map-style Dataset of (image, label) into a gpufeed file, once, so that
gpufeed.Loader reads it at the disk's rate instead of paying the Dataset's cost every epoch:
pixels as they are (raw layout), or encoded images (jpeg layout) that gpufeed.Loader decodes,
crops and flips itself."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Iterator, Optional, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


def _name(dataset: Any) -> str:
    """The user's dataset's class name (also for the views of it made here)."""
    return getattr(dataset, "_gpufeed_name", None) or type(dataset).__name__


def _bad_item(dataset: Any, index: int, what: str) -> _native.FormatError:
    return _native.FormatError(
        f"gpufeed.pack: item {index} of {_name(dataset)} {what}; fix it in the dataset "
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


@contextlib.contextmanager
def untransformed(dataset: Any) -> Iterator[Any]:
    """`dataset` with its `transform` attribute off while inside: the items as stored, not one
    random augmentation of them (the transform goes to the Loader, which draws it anew every
    epoch). Restored after."""
    transform = getattr(dataset, "transform", None)
    if transform is None:
        yield dataset
        return
    dataset.transform = None
    try:
        yield dataset
    finally:
        dataset.transform = transform


def transform_advice(dataset: Any) -> tuple:
    """What the pack advice adds for `dataset`'s own transform: the Loader keywords and a note
    saying what is fused, what runs on the batch, and what cannot move as it is. ("", "") for a
    dataset without one."""
    from ._transform import plan_transform

    transform = getattr(dataset, "transform", None)
    target = getattr(dataset, "target_transform", None)
    notes = []
    if transform is not None:
        try:
            notes.append("its transform runs in the Loader: " + plan_transform(transform).describe())
        except _native.UsageError as error:
            notes.append(f"its transform cannot move as it is: {error}")
    if target is not None:
        notes.append("dataset.target_transform is not the Loader's: apply it to the labels "
                     "in the loop")
    return (", transform=dataset.transform" if transform is not None else ""), "; ".join(notes)


def _image_files(dataset: Any) -> Optional[list]:
    """A torchvision ImageFolder / DatasetFolder's (path, class index) list, else None."""
    samples = getattr(dataset, "samples", None)
    if not isinstance(samples, list) or not hasattr(dataset, "loader"):
        return None
    if samples and not (isinstance(samples[0], tuple) and isinstance(samples[0][0], str)):
        return None
    return samples


class _Items:
    """A list of (image, label) items as a map-style dataset named like the one they came from:
    an image folder's files (without its loader or transform), or items already fetched."""

    def __init__(self, name: str, items: list) -> None:
        self.items = items
        self._gpufeed_name = name

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> Any:
        return self.items[index]


def _jpeg_source(dataset: Any, index: int, image: Any) -> Any:
    """An item's image as JpegPackWriter takes it: a path, encoded bytes, or HWC uint8 pixels."""
    if isinstance(image, (str, os.PathLike)):
        return os.fspath(image)
    if isinstance(image, (bytes, bytearray, memoryview)):
        return bytes(image)
    pixels = _as_hwc(dataset, index, image, _channels_first(image))
    if pixels.shape[2] not in (1, 3):
        raise _bad_item(dataset, index, f"has {pixels.shape[2]} channels; the jpeg layout "
                        "stores 1 or 3 (pack it with store=\"raw\")")
    return pixels


def _pack_jpeg(dataset: Any, path: str, workers: int, chunk: int, quality: int, max_side: int,
               show: bool, order: list) -> None:
    from torch.utils.data import DataLoader

    files = _image_files(dataset)
    source = dataset if files is None else _Items(_name(dataset), files)
    samples = len(order)
    classes = getattr(dataset, "classes", None)
    class_names = [str(c) for c in classes] if isinstance(classes, (list, tuple)) else []
    # The items come from `workers` processes; each chunk's images are checked, decoded and
    # encoded on every core at once.
    writer = _native.JpegPackWriter(path, quality, max_side)
    loader = DataLoader(source, batch_size=chunk, sampler=order, num_workers=workers,
                        collate_fn=list)
    try:
        start = 0
        for items in loader:
            images, labels = [], []
            for offset, item in enumerate(items):
                i = order[start + offset]  # the item's index in the dataset
                if not isinstance(item, (tuple, list)) or len(item) != 2:
                    raise _bad_item(dataset, i, "is not an (image, label) pair")
                images.append(_jpeg_source(dataset, i, item[0]))
                labels.append(_label(dataset, i, item[1]))
            bad = writer.add(images, labels, start)
            if bad is not None:
                raise _bad_item(dataset, order[bad[0]], f"cannot be packed: {bad[1]}")
            start += len(items)
            if show:
                print(f"\rgpufeed.pack {start}/{samples} images", end="", file=sys.stderr)
        writer.commit(class_names, order)
    except BaseException:
        writer.abort()
        raise


def pack(
    dataset: Any,
    path: PathLike,
    *,
    store: Optional[str] = None,
    workers: int = 0,
    chunk: int = 64,
    quality: int = 0,
    max_side: int = 0,
    keep_order: bool = False,
    seed: int = 0,
    progress: Optional[bool] = None,
    shard_size: Union[int, str, None] = None,
    part: Optional[str] = None,
) -> str:
    """Writes every item of a map-style ``dataset`` (``len()`` and ``[i]`` giving ``(image,
    label)``) to a gpufeed file at ``path`` for ``gpufeed.Loader(path)`` to read. The file
    appears at ``path`` only once complete; a bad item raises ``gpufeed.FormatError`` naming
    its index, and nothing is left behind. ``workers`` processes read the items (a torch
    DataLoader's workers; 0: this process). ``progress`` (default: when stderr is a terminal)
    prints how far it got. Returns the path.

    ``dataset`` may also be where big image datasets come as files: a path, glob or list of
    WebDataset tar shards (``.jpg``/``.png``/``.webp`` + ``.cls``) or of Parquet files of the
    Hugging Face image layout (an ``image`` struct with ``bytes``, an integer ``label``), or a
    Hugging Face ``datasets.Dataset`` with an ``Image`` column (read undecoded). Their encoded
    images are stored as they are (``store="jpeg"``, the default for them): never decoded and
    encoded again, still each checked.

    ``store="raw"`` (the default for a Dataset): the pixels as they are, ``chunk`` samples per
    chunk. An image is a uint8
    array or tensor, HWC or CHW, or a PIL image; every one has the first one's shape.

    ``store="jpeg"``: encoded images, decoded by the loader (which crops and flips them
    itself). An image is a file path, the encoded bytes of a JPEG, PNG or WebP image (kept as
    they are), or pixels as above (encoded as JPEG). Every image is decoded once, on every
    core, to check it and to compute the channel statistics. ``quality`` (1-100) re-encodes
    every image; ``max_side`` shrinks those larger than it. A torchvision ImageFolder is packed
    from its files (``dataset.samples``, with its class names).

    The items are stored in a random permutation drawn from ``seed`` (h5pack convert's, for the
    same count and seed), each with its index in ``dataset`` in ``/meta/source_index``: a file
    read in chunk order then gives batches as mixed as a random order's, even from a
    class-sorted dataset. ``keep_order=True`` stores them in the dataset's order.

    ``shard_size`` (bytes, or ``"4GB"``, ``"512MiB"``) writes ``path`` as a directory of shard
    files of about that size and its ``manifest.json`` (``gpufeed.Loader(path)`` reads them as
    one dataset), each shard a slice of the one stored order, written atomically and read back
    once written; packing again keeps the shards already whole. ``part="I/N"`` packs only part
    I of N of the shards, for independent processes or machines writing to one ``path``; the
    last to finish writes the manifest (docs/shards.md).

    A dataset's ``transform`` attribute is off while its items are read: the file keeps the
    images as they are, and ``gpufeed.Loader(path, transform=dataset.transform)`` draws the
    augmentation anew every epoch, as the DataLoader did.

    Args:
        dataset: A map-style dataset of ``(image, label)`` items, or tar shards, Parquet files
            or a Hugging Face ``datasets.Dataset`` (above).
        path: The file to write, or with ``shard_size`` the directory of shards.
        store: ``"raw"`` (pixels) or ``"jpeg"`` (encoded images); default: ``"jpeg"`` for
            encoded sources, ``"raw"`` for a Dataset.
        workers: Processes that read the items (0: this process).
        chunk: ``store="raw"``: samples a chunk.
        quality: ``store="jpeg"``: re-encode every image at this quality (0: keep the bytes).
        max_side: ``store="jpeg"``: shrink images larger than this (0: no limit).
        keep_order: Store the items in the dataset's order, not a permutation.
        seed: The permutation's seed.
        progress: Print progress (default: when stderr is a terminal).
        shard_size: Write shards of about this size (bytes, or ``"4GB"``, ``"512MiB"``).
        part: ``"I/N"``: only part I of N of the shards.

    Returns:
        ``path``.

    Raises:
        FormatError: A bad item or member, naming it; nothing is left behind.
        UsageError: A bad keyword's value.
    """
    path = os.fspath(path)
    from ._pack_sources import encoded_source

    encoded = encoded_source(dataset)
    if encoded is not None:
        dataset = encoded
    store = store or ("jpeg" if encoded is not None else "raw")
    samples = len(dataset)
    if samples == 0:
        raise _native.UsageError(f"gpufeed.pack: {_name(dataset)} has no items")
    if chunk < 1:
        raise _native.UsageError(f"gpufeed.pack: chunk={chunk!r}: use 1 or more samples")
    if store not in ("raw", "jpeg"):
        raise _native.UsageError(f"gpufeed.pack: store={store!r}: use \"raw\" or \"jpeg\"")
    if not 0 <= quality <= 100:
        raise _native.UsageError(f"gpufeed.pack: quality={quality!r}: use 1 to 100 (0: keep "
                                 "the images' own bytes)")
    if max_side < 0:
        raise _native.UsageError(f"gpufeed.pack: max_side={max_side!r}: use 0 (no limit) or "
                                 "a side in pixels")
    show = sys.stderr.isatty() if progress is None else progress
    order = list(range(samples)) if keep_order else _native.stored_order(samples, seed)
    with untransformed(dataset):
        if shard_size is None and part is None:
            return _pack(dataset, path, store, workers, chunk, quality, max_side, show, order)
        from ._pack_shards import pack_shards

        return pack_shards(
            path, order, _sample_bytes(dataset, store, order), shard_size, part,
            chunk if store == "raw" else 1,
            lambda target, indices: _pack(dataset, target, store, workers, chunk, quality,
                                          max_side, show, indices))


def _sample_bytes(dataset: Any, store: str, order: list) -> int:
    """About what a sample takes in a file: the mean of a few items' encoded sizes (jpeg; pixels
    are encoded at about an eighth of their bytes), or the first item's pixels (raw)."""
    picked = [order[i] for i in range(0, len(order), max(1, len(order) // 16))][:16]
    files = _image_files(dataset)
    sizes = []
    for i in picked:
        image = files[i][0] if files is not None else dataset[i][0]
        if store == "jpeg" and isinstance(image, (str, os.PathLike)):
            sizes.append(os.path.getsize(image))
        elif store == "jpeg" and isinstance(image, (bytes, bytearray, memoryview)):
            sizes.append(len(image))
        else:
            pixels = _as_hwc(dataset, i, image, _channels_first(image)).nbytes
            sizes.append(pixels // 8 if store == "jpeg" else pixels)
        if store == "raw":
            break
    return max(1, sum(sizes) // len(sizes))


def _pack(dataset: Any, path: str, store: str, workers: int, chunk: int, quality: int,
          max_side: int, show: bool, order: list) -> str:
    import numpy as np
    from torch.utils.data import DataLoader

    samples = len(order)  # all of the dataset, or one shard's slice of it
    if store == "jpeg":
        try:
            _pack_jpeg(dataset, path, workers, chunk, quality, max_side, show, order)
        finally:
            if show:
                print(file=sys.stderr)
        return path
    first = dataset[order[0]]
    if not isinstance(first, (tuple, list)) or len(first) != 2:
        raise _bad_item(dataset, order[0], "is not an (image, label) pair")
    channels_first = _channels_first(first[0])
    height, width, channels = _as_hwc(dataset, order[0], first[0], channels_first).shape
    writer = _native.PackWriter(path, samples, height, width, channels, chunk)
    loader = DataLoader(dataset, batch_size=writer.samples_per_chunk, sampler=order,
                        num_workers=workers, collate_fn=list)
    labels = np.empty(samples, dtype=np.int64)
    try:
        start = 0
        for index, items in enumerate(loader):
            pixels = np.empty((len(items), height, width, channels), dtype=np.uint8)
            for offset, item in enumerate(items):
                i = order[start + offset]  # the item's index in the dataset
                if not isinstance(item, (tuple, list)) or len(item) != 2:
                    raise _bad_item(dataset, i, "is not an (image, label) pair")
                image = _as_hwc(dataset, i, item[0], channels_first)
                if image.shape != pixels.shape[1:]:
                    raise _bad_item(dataset, i, f"is {'x'.join(map(str, image.shape))} (HWC), "
                                    f"not {height}x{width}x{channels} like item 0")
                pixels[offset] = image
                labels[start + offset] = _label(dataset, i, item[1])
            writer.write_chunk(index, pixels)
            start += len(items)
            if show:
                print(f"\rgpufeed.pack {start}/{samples} samples", end="", file=sys.stderr)
        writer.write_labels(labels)
        writer.write_source_index(order)
        writer.commit()
    except BaseException:
        writer.abort()  # the temporary file goes; nothing appears at `path`
        raise
    finally:
        if show:
            print(file=sys.stderr)
    return path


def _store_for(image: Any) -> str:
    return "jpeg" if isinstance(image, (str, os.PathLike, bytes, bytearray, memoryview)) else "raw"
