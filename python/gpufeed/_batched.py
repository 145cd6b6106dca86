"""Faster runs of torchvision ops on a delivered batch, with the op's own parameter draws (its
get_params, from the sample's seed) and its arithmetic: batched on a device (one kernel over the
samples that share a step instead of one launch per sample), in place per sample on the CPU (no
temporary images: the same float operations in the same order, so the same values). The tests
compare both with the op itself (tests/python/test_transform.py)."""

from __future__ import annotations

import random as _random
from typing import Any, Callable, List, Optional

_V1 = "torchvision.transforms.transforms"


def batched(op: Any) -> Optional[Callable[[Any, List[int], Any], Optional[Any]]]:
    """A batched runner for `op`, or None where the op has none (it then runs per sample). A
    runner returns None for a batch it does not take (the caller runs the op per sample)."""
    if type(op).__module__ == _V1 and type(op).__name__ == "ColorJitter":
        return lambda images, seeds, generator: _color_jitter(op, images, seeds, generator)
    return None


def one_sample(op: Any) -> Optional[Callable[..., Optional[Any]]]:
    """An in-place runner of `op` for one CPU image whose seed the caller set, or None where the
    op has none: runner(image, owned) changes `image` itself when `owned`, else a copy. A
    runner returns None for an image it does not take."""
    if type(op).__module__ == _V1 and type(op).__name__ == "ColorJitter":
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
