"""gpufeed.Loader: the C++ loader as a Python iterable of (images, labels) tensors."""

from __future__ import annotations

import inspect
import json
import os
import threading
import warnings
from typing import Any, Iterator, Literal, Optional, Sequence, Tuple, Union

from . import _native, _nvjpeg, _profile_state
from ._stats import LoaderStats
from ._transform import PLANNED_KEYWORDS, TransformPlan, check_on_batch, plan_transform

PathLike = Union[str, "os.PathLike[str]"]
Output = Literal["torch", "numpy", "dlpack"]
# The string keywords' values (the C++ fields' names for them; a type checker and an IDE see
# them; the loader checks them and names the choices when one is wrong). A dtype and a device may
# also be torch's own objects (torch.bfloat16, torch.device("cuda", 1)).
Order = Literal["chunk", "random", "sequential"]
DType = Union[Literal["float32", "float16", "bfloat16", "uint8"], Any]
Device = Union[str, Any]
Augment = Literal["none", "flip", "crop-flip", "center"]
Decode = Literal["cpu", "gpu", "auto"]
OnError = Literal["fail", "skip"]
Layout = Literal["nchw", "nhwc"]
ResizeFilter = Literal["bilinear", "bicubic", "area"]
Crop = Literal["none", "center", "random", "random-resized"]

_OUTPUTS = ("torch", "numpy", "dlpack")


def _converter(output: str):
    """The function that turns a BatchArray into the caller's array type (zero-copy)."""
    if output == "dlpack":
        return lambda array: array
    try:
        module = __import__(output)
    except ImportError:
        raise _native.UsageError(
            f"output={output!r} needs the {output} package, which is not installed; install "
            "it, or pass output='dlpack' and convert with your framework's from_dlpack"
        ) from None
    return module.from_dlpack


class OrderWarning(UserWarning):
    """The Loader's order mixes the file's labels poorly into batches (a class-sorted file read
    in chunk order): said once, when the Loader is made."""


class DecodeWarning(UserWarning):
    """``decode="auto"`` on a CUDA device decodes on the CPU (no libnvjpeg, or a GPU without
    JPEG engines): said once, when the Loader is made, with why."""


class Batch:
    """One delivered batch. Unpacks as ``images, labels``; ``labels`` is None when the loader
    reads no labels. Holding any of its arrays holds the batch's slot; the slot goes back to the
    loader when the last reference is gone (on CUDA, after the work queued on the streams the
    arrays were used on)."""

    __slots__ = ("images", "labels", "_delivery")

    def __init__(self, images: Any, labels: Any, delivery: _native.Delivery) -> None:
        self.images = images
        self.labels = labels
        self._delivery = delivery

    def __iter__(self) -> Iterator[Any]:
        yield self.images
        yield self.labels

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> Any:
        return (self.images, self.labels)[i]

    @property
    def indices(self) -> list[int]:
        """The dataset index of every sample, in batch order."""
        return self._delivery.indices

    @property
    def echoed(self) -> bool:
        """True when this batch repeats the previous fresh one (batch echoing)."""
        return self._delivery.echoed

    @property
    def epoch(self) -> int:
        return self._delivery.epoch

    @property
    def index(self) -> int:
        """Position of the batch in its epoch (an echo has its fresh batch's index)."""
        return self._delivery.index

    def __repr__(self) -> str:
        shape = tuple(getattr(self.images, "shape", ()))
        return (
            f"gpufeed.Batch(epoch={self.epoch}, index={self.index}, images={shape}, "
            f"echoed={self.echoed})"
        )


class Epoch:
    """The batches of one epoch, in order. Iterating waits only when the next batch is not
    ready yet (without holding the GIL; Ctrl-C raises KeyboardInterrupt). Starting another epoch
    on the same loader ends this one."""

    def __init__(self, loader: "Loader", epoch: int, generation: int) -> None:
        self._loader = loader
        self._epoch = epoch
        self._generation = generation

    def __iter__(self) -> "Epoch":
        return self

    def __next__(self) -> Batch:
        current = _profile_state.active
        if current is not None:
            return current._loader_next(self._next)  # the time between batches is a step
        return self._next()

    def _next(self) -> Batch:
        loader = self._loader
        if loader._generation != self._generation:
            raise StopIteration  # superseded by a later epoch() of the same loader
        delivery = loader._native.next()
        if delivery is None:
            raise StopIteration
        convert = loader._convert
        labels = delivery.labels
        images = convert(delivery.images)
        if loader._plan is not None and loader._plan.steps:
            images = loader._on_batch(images, delivery)
        return Batch(images, None if labels is None else convert(labels), delivery)

    def __len__(self) -> int:
        """Fresh batches of this epoch (fewer when it continues a restored state)."""
        return self._loader._native.batches_in_epoch


# Keywords of earlier releases and what replaced them (one name and unit with C++).
_RENAMED = {
    "cache_mb": "cache_bytes, in bytes (cache_bytes=512 << 20)",
    "memory_mb": "memory_bytes, in bytes (memory_bytes=1024 << 20)",
    "std": "stddev",
}


class Loader:
    """Reads a gpufeed HDF5 dataset and delivers its batches, normalized, with the same C++
    pipeline pipebench measures.

    Iterating the Loader runs its next epoch; ``loader.epoch(n)`` runs epoch n. Each batch is an
    ``(images, labels)`` pair (``Batch``: also ``.indices``, ``.echoed``, ``.epoch``, ``.index``).

    Example::

        loader = gpufeed.Loader("train.h5", batch_size=256, workers=8, device="cuda",
                                transform=dataset.transform)
        for images, labels in loader:
            ...

    Every keyword is a ``gpufeed::LoaderOptions`` field with the same default and range; a
    dtype and a device may be torch's own objects.

    Args:
        path: The dataset: one file (raw or jpeg layout, or your own file: name its datasets
            with ``images``/``labels``), a directory of shards with its ``manifest.json``
            (``h5pack convert --shard-size``, ``gpufeed.pack(shard_size=)``), a glob
            (``"train-*.h5"``) or a list of files (docs/shards.md). ``s3://bucket/key`` reads
            from S3-compatible object storage with the standard AWS variables and files
            (``AWS_ENDPOINT_URL_S3``, ``AWS_PROFILE``, ...).
        batch_size: Samples a batch.
        workers: Threads that read and decode; ``"auto"`` tunes them while the loader runs;
            0 takes this rank's share of the cores the process may use (its affinity divided
            by ``LOCAL_WORLD_SIZE`` under torchrun).
        order: ``"chunk"`` (shuffled chunk by chunk, then within a window of chunks: the
            default, shuffled and fast), ``"random"`` (a full permutation) or
            ``"sequential"``.
        seed: The seed of the order and of every random transform (per epoch and sample).
        device: ``"cpu"``, ``"cuda"``/``"cuda:N"``/``torch.device`` (the batch is copied as
            uint8 and normalized there) or ``"auto"``.
        dtype: The images' dtype: ``"float32"``, ``"float16"``, ``"bfloat16"`` (CUDA) or
            ``"uint8"`` (not normalized), or the torch dtype.
        echo: Batch echoing when input is the bottleneck: each batch delivered this many
            times (1: none), or ``"auto"``/``"auto:CAP"`` (as often as the loop waits).
        augment: A short spelling of flips and crops: ``"none"``, ``"flip"``, ``"crop-flip"``,
            ``"center"``.
        decode: Where jpeg-layout images are decoded: ``"cpu"`` (the workers), ``"gpu"`` (the
            GPU's hardware JPEG engines through nvJPEG for every image they take; the workers
            decode the rest: progressive, CMYK, PNG, ...) or ``"auto"`` (the engines first, the
            workers for what they cannot keep up with; the CPU without engines). ``gpu`` and
            ``auto`` need ``device="cuda"``; libnvjpeg is found in PyPI's ``nvidia-nvjpeg``,
            torchvision's wheel or the CUDA toolkit. The engines' pixels differ from the CPU
            decoder's by a few levels; ``stats().decode`` counts where each image went.
        size: The output ``(height, width)`` (or one int) of a jpeg-layout file or a crop.
        mean: Per-channel mean on the 0-255 scale; default: the file's /meta/mean, else 0.
        stddev: Per-channel std on the 0-255 scale; default: the file's /meta/std, else 255
            (output in [0, 1]).
        shard: ``(rank, world_size)``; default: ``RANK`` and ``WORLD_SIZE`` (torchrun).
        on_error: A sample that cannot be read or decoded: ``"fail"`` (PipelineError naming
            it) or ``"skip"`` (counted in ``stats().skipped_samples``).
        images: Your own file's images dataset.
        labels: Your own file's labels dataset; None: no labels.
        layout: Your own file's images layout, ``"nhwc"`` or ``"nchw"``.
        prefetch: Batches prepared ahead of the loop; ``"auto"`` tunes it within
            ``memory_bytes``.
        cpu_budget: With ``workers="auto"``: at most this many threads (0: the rank's share).
        memory_bytes: With ``prefetch="auto"``: batch slots' bytes (0: 1 GiB).
        chunk_window: ``order="chunk"``: chunks shuffled together.
        cache_bytes: The chunk cache's budget in bytes.
        read_requests: Object storage: GETs in flight ahead of the reads (``"auto"``: from the
            read-ahead budget, at most 32 per worker thread).
        cache_dir: Object storage: a node-local directory that keeps every chunk read, so later
            epochs read the disk (written at idle priority, never slowing a read or a step).
        cache_dir_bytes: ``cache_dir``'s budget (0: half its filesystem's free space).
        drop_last: No partial last batch (DataLoader's meaning).
        drop_tail: Drop the samples the world size does not divide (DistributedSampler's).
        use_index: False ignores the file's /index.
        output_layout: ``"nchw"`` or ``"nhwc"`` (CUDA).
        reaugment_echoes: Each echo of a batch shows a new flip.
        resize_filter: ``"bilinear"``, ``"bicubic"`` or ``"area"`` (Pillow's, antialiased).
        resize: Resize first: the shorter side to an int, or ``(height, width)``.
        resize_max: With an int ``resize``: the longer side's limit (0: none).
        crop: ``"none"``, ``"center"``, ``"random"`` or ``"random-resized"``, to ``size``.
        crop_scale: ``"random-resized"``: the area's range (torchvision's ``scale``).
        crop_ratio: ``"random-resized"``: the aspect ratio's range.
        crop_padding: ``"random"``: zero padding (torchvision's ``padding``).
        pad_if_needed: ``"random"``: pad an image smaller than the crop.
        hflip: Probability of a horizontal flip.
        vflip: Probability of a vertical flip.
        transform: A torchvision transform (v1 or v2, e.g. your dataset's): its geometric
            prefix and conversions are fused into the decode and normalize, the rest runs on
            the delivered batch (docs/transforms.md); it replaces the keywords it sets.
        output: What batches are: ``"torch"`` tensors, ``"numpy"`` arrays (CPU device) or the
            raw DLPack-exporting arrays (``"dlpack"``) for any other framework.

    Raises:
        UsageError: A bad value, naming the keyword.
        FormatError: A bad file, naming it.
        PipelineError: A failure while an epoch runs, at the next batch.
    """

    def __init__(
        self,
        path: PathLike,
        *,
        batch_size: int = 256,
        workers: Union[int, str] = 0,
        order: Order = "chunk",
        seed: int = 0,
        device: Device = "cpu",
        dtype: DType = "float32",
        echo: Union[int, str] = 1,
        augment: Augment = "none",
        decode: Decode = "cpu",
        size: Union[None, int, Tuple[int, int]] = None,
        mean: Optional[Sequence[float]] = None,
        stddev: Optional[Sequence[float]] = None,
        shard: Optional[Tuple[int, int]] = None,
        on_error: OnError = "fail",
        images: str = "/images",
        labels: Optional[str] = "/labels",
        layout: Optional[Layout] = None,
        prefetch: Union[int, str] = 4,
        cpu_budget: int = 0,
        memory_bytes: int = 0,
        chunk_window: int = 16,
        cache_bytes: int = 512 << 20,
        read_requests: Union[int, str] = "auto",
        cache_dir: Optional[str] = None,
        cache_dir_bytes: int = 0,
        drop_last: bool = False,
        drop_tail: bool = False,
        use_index: bool = True,
        output_layout: Layout = "nchw",
        reaugment_echoes: bool = True,
        resize_filter: ResizeFilter = "bilinear",
        resize: Union[None, int, Tuple[int, int]] = None,
        resize_max: int = 0,
        crop: Crop = "none",
        crop_scale: Tuple[float, float] = (0.08, 1.0),
        crop_ratio: Tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0),
        crop_padding: Union[int, Tuple[int, ...]] = 0,
        pad_if_needed: bool = False,
        hflip: float = 0.0,
        vflip: float = 0.0,
        transform: Any = None,
        output: Output = "torch",
        **unknown: Any,
    ) -> None:
        if output not in _OUTPUTS:
            raise _native.UsageError(f"output={output!r}: use 'torch', 'numpy' or 'dlpack'")
        if unknown:
            name = next(iter(unknown))
            hint = _RENAMED.get(name)
            raise TypeError(
                f"gpufeed.Loader() got an unexpected keyword argument {name!r}"
                + (f"; use {hint}" if hint else "")
            )
        # Every keyword but these is a LoaderOptions field, converted and checked in C++.
        keywords = {
            k: v for k, v in locals().items()
            if k not in ("self", "path", "output", "unknown", "transform")
        }
        if cache_dir is not None:
            keywords["cache_dir"] = os.fspath(cache_dir)
        if isinstance(path, (list, tuple)):  # shards named one by one: read as one dataset
            keywords["paths"] = [os.fspath(p) for p in path]
            more = f" (and {len(path) - 1} more)" if len(path) > 1 else ""
            self._path = (keywords["paths"] or [""])[0] + more
        else:
            self._path = os.fspath(path)
        self._keywords = dict(keywords, transform=transform)
        self._output = output
        self._convert = _converter(output)
        self._plan: Optional[TransformPlan] = None
        self._dtype = None
        if transform is not None:
            keywords = self._planned(transform, keywords, output)
        if decode != "cpu":
            _nvjpeg.register()
        self._native = _native.Loader(self._path, keywords)
        if self._plan is not None:
            if self._native.encoded and not ("size" in self._plan.keywords
                                             or "resize" in self._plan.keywords):
                self._native.close()
                raise _native.UsageError(
                    f"transform= on {self._path}: its images have sizes of their own and the "
                    "transform sets none, so a batch has no one size; start the transform with "
                    "a crop or a resize to (height, width), as a DataLoader would need too")
            check_on_batch(self._plan, self._native.sample_shape, keywords["dtype"])
        for notice in self._native.notices:
            category = DecodeWarning if notice.startswith("decode=") else OrderWarning
            warnings.warn(notice, category, stacklevel=2)
        self._generation = 0
        self._next_epoch = 0
        self._lock = threading.Lock()
        _profile_state.note_input(self)

    def _planned(self, transform: Any, keywords: dict, output: str) -> dict:
        """The keywords with `transform`'s fused part in them; the plan kept for the rest."""
        defaults = inspect.signature(Loader).parameters
        given = [k for k in PLANNED_KEYWORDS if keywords[k] != defaults[k].default]
        if given:
            raise _native.UsageError(
                f"{given[0]}={keywords[given[0]]!r} beside transform=: the transform sets the "
                "crops, flips, size and normalization; pass one of them")
        plan = self._plan = plan_transform(transform)
        dtype = str(keywords["dtype"]).replace("torch.", "")
        wanted = plan.keywords["dtype"]
        if plan.steps:
            if output != "torch":
                raise _native.UsageError(
                    f"output={output!r} with transform ops that run on the batch "
                    f"({plan.on_batch[0]}, ...): they run with torch; use output='torch'")
            if dtype != "float32":
                self._dtype = dtype  # the steps run in float32; the batch is cast after them
        elif wanted == "uint8" and dtype not in ("float32", "uint8"):
            raise _native.UsageError(
                f"dtype={dtype!r}: the transform has no ToTensor/ToDtype, so it delivers uint8 "
                "pixels; add the conversion to the transform, or drop dtype")
        elif wanted != "uint8":
            wanted = dtype
        return dict(keywords, **dict(plan.keywords, dtype=wanted))

    def _on_batch(self, images: Any, delivery: Any) -> Any:
        """The transform's ops that run on the delivered batch, timed as the loader's
        `transform` stage (the consumer waits for it, as for any other stage)."""
        begin = _native.now_ns()
        # Without echoes a slot is delivered once: the steps may write into it.
        owned = self._keywords["echo"] == 1 and images.device.type == "cpu"
        images = self._plan.apply(images, delivery.indices, self._keywords["seed"],
                                  delivery.epoch, owned)
        if self._dtype is not None:
            import torch

            images = images.to(getattr(torch, self._dtype))
        end = _native.now_ns()
        self._native.add_transform_work(end - begin, len(delivery.indices))
        current = _profile_state.active
        if current is not None:
            current._input_stage("transform", begin, end)
        return images

    @property
    def transform_plan(self) -> Optional[str]:
        """How the transform runs: what is fused into the decode and normalize, what runs on
        the delivered batch. None without a transform."""
        return None if self._plan is None else self._plan.describe()

    def epoch(self, epoch: int) -> Epoch:
        """Starts epoch ``epoch`` (ending an unfinished one) and returns its batches. The
        sample order is a function of the seed, the epoch and the shard only."""
        with self._lock:
            self._generation += 1
            generation = self._generation
            self._next_epoch = epoch + 1
        self._native.start_epoch(epoch)
        _profile_state.note_input(self)
        return Epoch(self, epoch, generation)

    def __iter__(self) -> Epoch:
        """``for images, labels in loader:`` runs the next epoch, as iterating a DataLoader
        does: 0 first, then 1, 2, ...; after ``epoch(n)`` or a restored state, the one after
        it; after ``set_epoch(n)``, epoch n."""
        return self.epoch(self._next_epoch)

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next ``for ... in loader`` runs (DistributedSampler.set_epoch): the
        sample order is a function of the seed, the epoch and the shard, so every rank that
        sets the same epoch draws its share of the same global order."""
        if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 0:
            raise _native.UsageError(f"set_epoch({epoch!r}): the epoch is an int >= 0")
        with self._lock:
            self._next_epoch = epoch

    def __len__(self) -> int:
        """Fresh batches per epoch for this rank (echoes come on top)."""
        return self._native.batches_per_epoch

    @property
    def samples_per_epoch(self) -> int:
        """Samples this rank reads per epoch."""
        return self._native.samples_per_epoch

    @property
    def device(self) -> str:
        """The device batches are delivered on: "cpu" or "cuda:N"."""
        return self._native.device

    @property
    def workers(self) -> int:
        """Threads working for the loader (the tuner's current count with workers="auto")."""
        return self._native.workers

    @property
    def sample_shape(self) -> Tuple[int, int, int]:
        """(height, width, channels) of one delivered sample."""
        return self._native.sample_shape

    @property
    def path(self) -> str:
        return self._path

    def options(self) -> dict:
        """The keywords this loader was made with."""
        return dict(self._keywords, output=self._output)

    def state_dict(self) -> dict:
        """Where this loader stands in the current epoch, as a small JSON-able dict to keep in a
        checkpoint: the epoch, what every rank consumed of it (per world size the job ran
        with), the echoes of the last batch, and what it belongs to (the dataset's
        fingerprint, seed, order, batch size). Take it between training steps, when every rank
        has consumed the same number of batches: any rank's state describes the whole job."""
        return json.loads(self._native.state_json())

    def load_state_dict(self, state: dict) -> None:
        """Continues from ``state`` at the next ``epoch(state["epoch"])``: with the same world
        size each rank goes on where it stopped, batch for batch and pixel for pixel; with
        another world size the samples no rank consumed are dealt to the new ranks, each once
        (DistributedSampler's padding aside). Raises UsageError for a state of another
        dataset, seed, order or batch size, or a damaged one."""
        try:
            text = json.dumps(state)
        except (TypeError, ValueError) as e:
            raise _native.UsageError(f"loader state: not the dict state_dict() returned ({e})")
        self._native.restore_json(text)
        with self._lock:
            self._next_epoch = int(state["epoch"])  # `for ... in loader` continues it

    def stats(self) -> LoaderStats:
        """Counters since the loader started (or reset_stats()): per-stage busy time and items,
        queue depth, chunk cache, echo counts, decode, memory (``.to_dict()``: the JSON
        pipebench writes for them)."""
        return LoaderStats.from_dict(json.loads(self._native.stats_json()))

    def reset_stats(self) -> None:
        self._native.reset_stats()

    @property
    def closed(self) -> bool:
        return self._native.closed

    # gpufeed.profile's InputSource protocol (_profile_state.InputSource): a snapshot of the
    # counters when the profile first sees the loader, and the facts of the run since.
    def profile_snapshot(self) -> Any:
        """A snapshot of the counters (gpufeed.profile's InputSource protocol)."""
        return _native.stats_snapshot(self._native)

    def profile_facts(self, since: Any) -> Any:
        """The settings and the counters since `since` (gpufeed.profile's InputSource
        protocol)."""
        return _native.run_facts(self._native, since)

    def close(self) -> None:
        """Stops the epoch in flight and frees the loader. Batches still held stay valid."""
        with self._lock:
            self._generation += 1
        self._native.close()

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._native.closed else f"{len(self)} batches per epoch"
        return f"gpufeed.Loader({self._path!r}, device={self._keywords['device']!r}, {state})"
