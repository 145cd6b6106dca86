"""Faster runs of torchvision ops on a delivered batch, with the op's own parameter draws (its
get_params, from the sample's seed) and its arithmetic: batched on a device (one kernel over the
samples that share a step instead of one launch per sample), in place per sample on the CPU (no
temporary images: the same float operations in the same order, so the same values). The tests
compare both with the op itself (tests/python/test_transform.py)."""

from __future__ import annotations

import random as _random
from typing import Any, Callable, List, Optional, Sequence

from . import _native
from ._ops import api_kind

_COLOR_JITTER = ("v1", "ColorJitter")

# gpufeed._native.color_program's op codes (gpufeed::ColorOp).
_SKIP, _NORMALIZE = 0, 4


def batched(op: Any) -> Optional[Callable[[Any, List[int], Any], Optional[Any]]]:
    """A batched runner for `op`, or None where the op has none (it then runs per sample). A
    runner returns None for a batch it does not take (the caller runs the op per sample)."""
    if api_kind(op) == _COLOR_JITTER:
        return lambda images, seeds, generator: _color_jitter(op, images, seeds, generator)
    return None


def one_sample(op: Any) -> Optional[Callable[..., Optional[Any]]]:
    """An in-place runner of `op` for one CPU image whose seed the caller set, or None where the
    op has none: runner(image, owned) changes `image` itself when `owned`, else a copy. A
    runner returns None for an image it does not take."""
    if api_kind(op) == _COLOR_JITTER:
        return lambda image, owned=False: _color_jitter_one(op, image, owned)
    return None


def _color_jitter_one(op: Any, image: Any, owned: bool) -> Optional[Any]:
    """ColorJitter.forward's draws and blends, in place (on a copy unless `owned`)."""
    import torchvision.transforms.functional as F

    if not image.is_floating_point() or image.ndim != 3 or image.shape[0] != 3:
        return None
    fn_idx, b, c, s, h = op.get_params(op.brightness, op.contrast, op.saturation, op.hue)
    x = image if owned else image.clone()
    for fn in fn_idx.tolist():
        if fn == 0 and b is not None:
            x.mul_(b).clamp_(0, 1.0)  # _blend(x, zeros, b)
        elif fn in (1, 2) and (c if fn == 1 else s) is not None:
            f = c if fn == 1 else s
            r, g, bl = x.unbind(0)
            gray = (0.2989 * r + 0.587 * g + 0.114 * bl).unsqueeze(0)
            other = gray.mean(dim=(-3, -2, -1), keepdim=True) if fn == 1 else gray
            x.mul_(f).add_(other * (1.0 - f)).clamp_(0, 1.0)  # f * x + (1 - f) * other
        elif fn == 3 and h is not None:
            x = F.adjust_hue(x, h)
    return x


def _color_jitter(op: Any, images: Any, seeds: List[int], generator: Any) -> Optional[Any]:
    """ColorJitter (v1) on float RGB images: each sample's order and factors drawn by
    ColorJitter.get_params from its seed; brightness, contrast and saturation blended as
    torchvision's functional_tensor does, over every sample whose k-th step is that adjustment;
    hue (rarely set, costly either way) per sample with torchvision's own adjust_hue."""
    import torch
    import torchvision.transforms.functional as F

    if not images.is_floating_point() or images.ndim != 4 or images.shape[1] != 3:
        return None
    n = images.shape[0]
    order = torch.empty((n, 4), dtype=torch.long)
    factors = torch.ones((n, 4), dtype=torch.float64)
    hues: List[float] = [0.0] * n
    for i, seed in enumerate(seeds):
        generator.manual_seed(seed)
        _random.seed(seed)
        fn_idx, b, c, s, h = op.get_params(op.brightness, op.contrast, op.saturation, op.hue)
        order[i] = torch.as_tensor(fn_idx)
        factors[i, :3] = torch.tensor([b if b is not None else 1.0, c if c is not None else 1.0,
                                       s if s is not None else 1.0], dtype=torch.float64)
        hues[i] = h if h is not None else 0.0
    present = [op.brightness is not None, op.contrast is not None, op.saturation is not None,
               op.hue is not None]
    images = images.clone()
    shape = (-1, 1, 1, 1)
    for k in range(4):
        for fn in range(4):
            if not present[fn]:
                continue
            rows = (order[:, k] == fn).nonzero().flatten()
            if len(rows) == 0:
                continue
            rows = rows.to(images.device)
            x = images.index_select(0, rows)
            if fn == 3:
                y = torch.stack([F.adjust_hue(x[j], hues[int(r)]) for j, r in enumerate(rows)])
            else:
                f64 = factors.index_select(0, rows.cpu())[:, fn]
                ratio = f64.to(images.dtype).to(images.device).view(shape)
                rest = (1.0 - f64).to(images.dtype).to(images.device).view(shape)
                if fn == 0:
                    other = torch.zeros_like(x)
                else:
                    r, g, b = x.unbind(dim=1)
                    gray = (0.2989 * r + 0.587 * g + 0.114 * b).unsqueeze(1)
                    other = gray.mean(dim=(-3, -2, -1), keepdim=True) if fn == 1 else gray
                y = (ratio * x + rest * other).clamp(0, 1.0)
            images.index_copy_(0, rows, y)
    return images


def color_program(steps: Sequence[Any]) -> Optional[Callable[..., Optional[Any]]]:
    """A native CPU runner for `steps` when every one is a colour step (ColorJitter of v1
    without hue, Normalize of 3 channels), or None: runner(images, indices, seed_of, generator)
    draws each sample's parameters with the op's own get_params (seed_of(sample, position)
    seeds torch's generator and `random`, as the op run alone is seeded) and runs every step of
    a sample in one native call, in cache, without the GIL and without torch's intra-op threads
    (gpufeed::color_program, the same float32 arithmetic as torchvision); with `owned` it writes
    into `images` itself (a batch delivered once: no fresh 38 MB a batch for the kernel to fault
    in). The runner returns None for a batch it does not take (not float32 RGB on the CPU)."""
    for step in steps:
        if step.kind == "normalize" and step.mean is not None and len(step.mean) == 3:
            continue
        if step.kind == "op" and api_kind(step.op) == _COLOR_JITTER and step.op.hue is None:
            continue
        return None
    return lambda images, indices, seed_of, generator, owned=False: _color_program(
        steps, images, indices, seed_of, generator, owned)


def _color_program(steps: Sequence[Any], images: Any, indices: Sequence[int],
                   seed_of: Callable[[int, int], int], generator: Any,
                   owned: bool) -> Optional[Any]:
    import torch

    if (images.device.type != "cpu" or images.dtype != torch.float32 or images.ndim != 4
            or images.shape[1] != 3):
        return None
    norms: List[List[float]] = []
    for step in steps:
        if step.kind == "normalize":
            norms.append(list(step.mean) + list(step.std))
        else:
            norms.extend([[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]] * 4)  # a jitter's four adjustments
    ops: List[List[int]] = []
    factors: List[List[float]] = []
    for sample in indices:
        row_ops: List[int] = []
        row_factors: List[float] = []
        for step in steps:
            if step.kind == "normalize":
                row_ops.append(_NORMALIZE)
                row_factors.append(1.0)
                continue
            seed = seed_of(int(sample), step.position)
            generator.manual_seed(seed)
            _random.seed(seed)
            op = step.op
            fn_idx, b, c, s, _ = op.get_params(op.brightness, op.contrast, op.saturation, op.hue)
            for fn in fn_idx.tolist():
                factor = (b, c, s, None)[fn]
                row_ops.append(_SKIP if factor is None else fn + 1)
                row_factors.append(1.0 if factor is None else float(factor))
        ops.append(row_ops)
        factors.append(row_factors)
    images = images.contiguous()
    out = images if owned else torch.empty_like(images)
    _native.color_program(images, out, torch.tensor(ops, dtype=torch.uint8),
                          torch.tensor(factors, dtype=torch.float64),
                          torch.tensor(norms, dtype=torch.float32))
    return out
