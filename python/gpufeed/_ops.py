"""Which torchvision op a transform op is: matched by isinstance against torchvision's own
classes (v1 and v2), so that a subclass that only renames or adds attributes is the op it
extends, while a class of the user's that happens to be called `Resize`, or a subclass that
overrides how the op draws or computes its pixels, is an op of its own (run as it is)."""

from __future__ import annotations

import functools
from typing import Any, Optional, Tuple

# The torchvision classes the Loader fuses, converts or refuses by name.
KNOWN = ("Compose", "Resize", "CenterCrop", "RandomCrop", "RandomResizedCrop",
         "RandomHorizontalFlip", "RandomVerticalFlip", "PILToTensor", "ToImage", "ToImageTensor",
         "ToPureTensor", "ToTensor", "ToDtype", "ConvertImageDtype", "Normalize", "ToPILImage",
         "Lambda", "ColorJitter")

# The methods through which an op of either API draws its parameters and computes its output:
# a subclass that overrides one of them computes something else.
_BEHAVIOUR = ("__call__", "forward", "get_params", "_get_params", "make_params", "_transform",
              "transform", "_call_kernel", "_needs_transform_list")


@functools.lru_cache(maxsize=None)
def _classes() -> Tuple[Tuple[str, str, type], ...]:
    """(api, name, class) of each known torchvision op this torchvision has; none without it."""
    found = []
    for api, module_name in (("v1", "torchvision.transforms"), ("v2", "torchvision.transforms.v2")):
        try:
            module = __import__(module_name, fromlist=["_"])
        except ImportError:
            continue
        for name in KNOWN:
            cls = getattr(module, name, None)
            if isinstance(cls, type):
                found.append((api, name, cls))
    return tuple(found)


def kind(op: Any) -> str:
    """"NAME" (the torchvision op `op` is, of either API), or "" for an op of its own."""
    matched = api_kind(op)
    return matched[1] if matched else ""


def api_kind(op: Any) -> Optional[Tuple[str, str]]:
    """("v1" or "v2", NAME) of the torchvision op `op` is, or None for an op of its own. Asked
    for every sample's ops on the batch: the answer depends on the op's class only, and is
    looked up once a class."""
    return _class_kind(type(op))


@functools.lru_cache(maxsize=None)
def _class_kind(cls: type) -> Optional[Tuple[str, str]]:
    for api, name, base in _classes():
        if cls is base:
            return api, name
    for api, name, base in _classes():
        if issubclass(cls, base) and all(
                getattr(cls, method, None) is getattr(base, method, None)
                for method in _BEHAVIOUR):
            return api, name
    return None
