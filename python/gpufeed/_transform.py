"""A torchvision transform as the Loader runs it: the geometric prefix and the conversions fused
into the C++ decode and the normalize step, every other op run on the delivered batch, per
sample, with torchvision's own code and parameter draws seeded from (seed, epoch, sample)."""

from __future__ import annotations

import random as _random
from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Tuple

from . import _native
from ._batched import batched, color_program, one_sample
from ._ops import kind

# The keywords a transform sets; passing one beside `transform=` is ambiguous.
PLANNED_KEYWORDS = ("augment", "size", "mean", "stddev", "resize", "resize_max", "crop",
                    "crop_scale", "crop_ratio", "crop_padding", "pad_if_needed", "hflip", "vflip",
                    "resize_filter")

_MASK = (1 << 64) - 1


def _mix(z: int) -> int:
    """SplitMix64's finalizer (the C++ sampler's), so seeds of neighbouring samples differ."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & _MASK
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & _MASK
    return z ^ (z >> 31)


def sample_seed(seed: int, epoch: int, sample: int, position: int) -> int:
    """The seed of op `position`'s draws for `sample` of `epoch`: a function of these only."""
    z = _mix((seed + 0x9E3779B97F4A7C15) & _MASK)
    for part in (epoch, sample, position):
        z = _mix(z ^ (part & _MASK))
    return z >> 1  # torch's manual_seed takes up to 2^63 - 1


def _spelled(op: Any) -> str:
    """The op as its repr says it, on one line."""
    return " ".join(repr(op).split())


def _flatten(transform: Any) -> List[Any]:
    """The ops of a (nested) Compose, or the single transform, in order."""
    inner = getattr(transform, "transforms", None)
    if kind(transform) == "Compose" and isinstance(inner, (list, tuple)):
        ops: List[Any] = []
        for op in inner:
            ops.extend(_flatten(op))
        return ops
    return [transform]


def _interpolation(op: Any, position: int) -> str:
    mode = str(getattr(op, "interpolation", "bilinear")).lower()
    for name in ("bilinear", "bicubic"):
        if name in mode:
            return name
    raise _native.UsageError(
        f"transform op {position} ({_spelled(op)}): interpolation {mode!r} is not fused; use "
        "InterpolationMode.BILINEAR or BICUBIC (Pillow's, antialiased)")


def _pair(size: Any) -> Tuple[int, int]:
    if isinstance(size, int):
        return size, size
    size = list(size)
    return (int(size[0]), int(size[0])) if len(size) == 1 else (int(size[0]), int(size[1]))


def _padding(op: Any, position: int) -> Tuple[int, int, int, int]:
    padding = op.padding
    if padding is None:
        return 0, 0, 0, 0
    if getattr(op, "padding_mode", "constant") != "constant" or op.fill not in (0, None):
        raise _native.UsageError(
            f"transform op {position} ({_spelled(op)}): only zero padding is fused "
            "(padding_mode='constant', fill=0)")
    if isinstance(padding, int):
        return padding, padding, padding, padding
    padding = [int(p) for p in padding]
    if len(padding) == 1:
        return tuple(padding * 4)  # type: ignore[return-value]
    if len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    return tuple(padding)  # type: ignore[return-value]


@dataclass
class _Step:
    """One thing done to the delivered batch: a transform op per sample, or a conversion."""

    kind: str  # "op" | "to_float" | "normalize"
    position: int = -1
    op: Any = None
    mean: Optional[Sequence[float]] = None
    std: Optional[Sequence[float]] = None
    constants: Any = None  # normalize: ((dtype, device), mean, std) tensors, made once


@dataclass
class TransformPlan:
    """What a transform becomes: the Loader keywords of its fused part, the steps run on the
    delivered batch, and its description (the advice and stats say it)."""

    keywords: dict = field(default_factory=dict)
    fused: List[str] = field(default_factory=list)
    steps: List[_Step] = field(default_factory=list)
    on_batch: List[str] = field(default_factory=list)
    batched: bool = True  # False: every op per sample (the reference the batched runners equal)
    program: Any = field(default=None, repr=False)  # the native colour runner, once looked up

    def describe(self) -> str:
        fused = ", ".join(self.fused) if self.fused else "nothing"
        text = f"fused into the decode and normalize: {fused}"
        if self.on_batch:
            text += f"; on the delivered batch, per sample: {', '.join(self.on_batch)}"
        return text

    def apply(self, images: Any, indices: Sequence[int], seed: int, epoch: int,
              owned: bool = False) -> Any:
        """The batch after the steps. The ops draw their parameters from torch's CPU generator
        (and Python's `random`), seeded per sample and op; the caller's generator states are
        restored after, so the training loop's own randomness never changes. On the CPU each
        sample goes through every step while it is in cache (colour steps in one native call,
        _batched.color_program, in place when the caller `owned` the batch); on a device each
        step runs over the batch (one batched kernel where the op has one, _batched.py)."""
        import torch

        generator = torch.random.default_generator
        saved, saved_py = generator.get_state(), _random.getstate()
        try:
            if images.device.type == "cpu" and self.batched:
                if self.program is None:
                    self.program = color_program(self.steps) or False
                if self.program:
                    out = self.program(images, indices,
                                       lambda sample, position: sample_seed(seed, epoch, sample,
                                                                            position),
                                       generator, owned)
                    if out is not None:
                        return out
            if images.device.type == "cpu" or not self.batched:
                return self._per_sample(images, indices, seed, epoch, generator)
            for step in self.steps:
                images = self._over_batch(step, images, indices, seed, epoch, generator)
            return images
        finally:
            generator.set_state(saved)
            _random.setstate(saved_py)

    def _per_sample(self, images: Any, indices: Sequence[int], seed: int, epoch: int,
                    generator: Any) -> Any:
        import torch

        out = None
        for i, sample in enumerate(indices):
            x, owned = images[i], False  # the batch slot's own pixels are never changed
            for step in self.steps:
                x, owned = _run(step, x, sample_seed(seed, epoch, int(sample), step.position),
                                generator, owned)
            if out is None:
                out = torch.empty((len(indices),) + tuple(x.shape), dtype=x.dtype,
                                  device=x.device)
            if tuple(x.shape) != tuple(out.shape[1:]):
                raise _native.PipelineError(
                    f"transform: sample {int(sample)} came out {tuple(x.shape)}, sample "
                    f"{int(indices[0])} {tuple(out.shape[1:])}; a batch needs one size: end the "
                    "transform with a fixed-size crop or resize")
            out[i] = x
        return out

    def _over_batch(self, step: "_Step", images: Any, indices: Sequence[int], seed: int,
                    epoch: int, generator: Any) -> Any:
        import torch

        if step.kind != "op":
            return _run(step, images, 0, generator, False)[0]
        seeds = [sample_seed(seed, epoch, int(s), step.position) for s in indices]
        fast = batched(step.op)
        out = fast(images, seeds, generator) if fast is not None else None
        if out is not None:
            return out
        return torch.stack([_run(step, images[i], s, generator, False)[0]
                            for i, s in enumerate(seeds)])


def _run(step: "_Step", x: Any, seed: int, generator: Any, owned: bool) -> Tuple[Any, bool]:
    """One step on one image (C, H, W) or, for the conversions, on a batch; `owned`: `x` is
    this plan's own tensor, which the step may change in place. Returns the result and whether
    it is owned."""
    import torch

    if step.kind == "to_float":
        return x.to(torch.float32, copy=not owned).div_(255.0), True
    if step.kind == "normalize":
        key = (x.dtype, x.device)
        if step.constants is None or step.constants[0] != key:
            step.constants = (key,
                              torch.tensor(step.mean, dtype=x.dtype, device=x.device).view(-1, 1, 1),
                              torch.tensor(step.std, dtype=x.dtype, device=x.device).view(-1, 1, 1))
        _, mean, std = step.constants
        return (x.sub_(mean) if owned else x.sub(mean)).div_(std), True
    generator.manual_seed(seed)
    _random.seed(seed)
    if x.device.type == "cpu":
        fast = one_sample(step.op)
        out = fast(x, owned) if fast is not None else None
        if out is not None:
            return out, True
    return step.op(x), False


_GEOMETRIC = ("Resize", "CenterCrop", "RandomCrop", "RandomResizedCrop", "RandomHorizontalFlip",
              "RandomVerticalFlip")
_TO_UINT8 = ("PILToTensor", "ToImage", "ToImageTensor", "ToPureTensor")
_REFUSED = {
    "ToPILImage": "the loader's batches are tensors: drop it (the ops after it run on tensors)",
    "Lambda": "a Lambda is opaque to the loader: make it a transform class that takes a tensor "
              "image (C, H, W), or apply it to the batch yourself (dtype=\"uint8\")",
}


class _Planner:
    """Walks the ops once: the fused prefix into keywords, the rest into steps."""

    def __init__(self) -> None:
        self.plan = TransformPlan()
        self.stage = "uint8"  # what the ops at this point see: uint8, float (0-1), normalized
        self.fusing = True
        self.crop_seen = False
        self.resize_seen = False
        self.delivered = "uint8"  # what the native loader hands the first step
        self.tensor = False  # the ops at this point see a tensor (else a PIL image)

    def run(self, ops: List[Any]) -> TransformPlan:
        for position, op in enumerate(ops):
            if not callable(op):
                raise _native.UsageError(
                    f"transform op {position} ({op!r}) is not callable; pass torchvision "
                    "transforms")
            name = kind(op)
            if name in _REFUSED:
                raise _native.UsageError(
                    f"transform op {position} ({_spelled(op)}) cannot run in the loader: "
                    f"{_REFUSED[name]}")
            if self.fusing and name in _GEOMETRIC and self._fuse_geometry(op, position):
                continue
            if self._conversion(op, position):
                continue
            if self.fusing:
                self.delivered, self.fusing = self.stage, False
            self.plan.steps.append(_Step("op", position, op))
            self.plan.on_batch.append(_spelled(op))
        if self.fusing:
            self.delivered = self.stage
        self.plan.keywords["dtype"] = "uint8" if self.delivered == "uint8" else "float32"
        return self.plan

    def _fuse_geometry(self, op: Any, position: int) -> bool:
        k = self.plan.keywords
        name = kind(op)
        if name in ("Resize", "RandomResizedCrop"):
            self._check_antialias(op, position)
        if name in ("RandomHorizontalFlip", "RandomVerticalFlip"):
            key = "hflip" if name == "RandomHorizontalFlip" else "vflip"
            if key in k:
                return False
            k[key] = float(op.p)
        elif name == "Resize":
            if self.resize_seen or self.crop_seen:
                return False
            size = op.size
            if isinstance(size, int) or (isinstance(size, (list, tuple)) and len(size) == 1):
                k["resize"] = size if isinstance(size, int) else int(size[0])
                if getattr(op, "max_size", None):
                    k["resize_max"] = int(op.max_size)
            else:
                k["resize"] = _pair(size)
            k["resize_filter"] = _interpolation(op, position)
            self.resize_seen = True
        else:  # a crop
            if self.crop_seen or (name == "RandomResizedCrop" and self.resize_seen):
                return False
            k["size"] = _pair(op.size)
            if name == "CenterCrop":
                k["crop"] = "center"
            elif name == "RandomCrop":
                k["crop"] = "random"
                k["crop_padding"] = _padding(op, position)
                k["pad_if_needed"] = bool(op.pad_if_needed)
            else:
                k["crop"] = "random-resized"
                k["crop_scale"] = tuple(float(s) for s in op.scale)
                k["crop_ratio"] = tuple(float(r) for r in op.ratio)
                k["resize_filter"] = _interpolation(op, position)
            self.crop_seen = True
        self.plan.fused.append(_spelled(op))
        return True

    def _check_antialias(self, op: Any, position: int) -> None:
        """A resize of a tensor image without antialiasing (antialias=False; None on a
        torchvision before 0.17, whose tensors it leaves unfiltered) makes other pixels than the
        Loader's, which resizes as Pillow does, antialiased: refused. A PIL image is always
        resized with antialiasing, whatever the op says."""
        antialias = getattr(op, "antialias", True)
        if self.tensor and antialias is not True:
            raise _native.UsageError(
                f"transform op {position} ({_spelled(op)}): antialias={antialias!r} on a tensor "
                "image resizes without antialiasing, and the Loader resizes as Pillow does "
                "(antialiased); set antialias=True, or resize before the op that makes the "
                "tensor")

    def _conversion(self, op: Any, position: int) -> bool:
        """ToTensor & co. and Normalize: fused while nothing runs on the batch yet, else steps."""
        import torch

        name = kind(op)
        to_float = name == "ToTensor" or (
            name in ("ToDtype", "ConvertImageDtype")
            and getattr(op, "dtype", None) in (torch.float32, torch.float)
            and getattr(op, "scale", True))
        if name in _TO_UINT8:
            if self.stage != "uint8":
                return False  # a float image back to uint8: torchvision's own op does it
            self.tensor = True
            if self.fusing:
                self.plan.fused.append(name)
            return True
        if to_float:
            if self.stage != "uint8":
                return False
            self.stage, self.tensor = "float", True
            if self.fusing:
                self.plan.fused.append(_spelled(op))
            else:
                self.plan.steps.append(_Step("to_float", position))
                self.plan.on_batch.append(_spelled(op))
            return True
        if name == "Normalize":
            if self.stage != "float" or getattr(op, "inplace", False) not in (False, None):
                return False
            mean = [float(m) for m in op.mean]
            std = [float(s) for s in op.std]
            self.stage = "normalized"
            if self.fusing:
                self.plan.keywords["mean"] = [m * 255.0 for m in mean]
                self.plan.keywords["stddev"] = [s * 255.0 for s in std]
                self.plan.fused.append(_spelled(op))
            else:
                self.plan.steps.append(_Step("normalize", position, mean=mean, std=std))
                self.plan.on_batch.append(_spelled(op))
            return True
        return False


def plan_transform(transform: Any) -> TransformPlan:
    """The plan of `transform` (a torchvision Compose of v1 or v2 ops, or one op). Raises
    UsageError naming the op and its position for one the loader cannot run."""
    plan = _Planner().run(_flatten(transform))
    k = plan.keywords
    stage_out = "uint8" if k["dtype"] == "uint8" else "float"
    if stage_out == "float" and "mean" not in k:
        k["mean"], k["stddev"] = [0.0, 0.0, 0.0], [255.0, 255.0, 255.0]  # ToTensor's 0-1
    return plan


def check_on_batch(plan: TransformPlan, shape: Tuple[int, int, int], dtype: str) -> None:
    """Runs every per-sample step once on a blank batch of two samples (the loader's delivered
    `shape`, HWC, and `dtype`): an op that cannot take a tensor image is refused now, in one
    line naming it, not at the first batch of a training run."""
    if not plan.steps:
        return
    import torch

    h, w, c = shape
    blank = torch.zeros((2, c, h, w), dtype=torch.uint8 if dtype == "uint8" else torch.float32)
    images = blank
    for step in plan.steps:
        try:
            images = TransformPlan(steps=[step]).apply(images, [0, 1], 0, 0)
        except Exception as error:  # noqa: BLE001 - any op's failure is the user's to see
            raise _native.UsageError(
                f"transform op {step.position} ({_spelled(step.op)}) fails on a tensor image "
                f"{tuple(images.shape[1:])} {images.dtype}: {type(error).__name__}: {error}; "
                "give it a tensor-capable op, or apply it yourself on the batch "
                "(dtype=\"uint8\")") from None
