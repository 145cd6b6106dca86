"""The loop's habits a profile counts inside its steps, from patches of torch it holds while it
runs (torch_patches makes them): host reads of tensors (.item(), .cpu() of a device tensor,
.numpy(), .tolist()), host tensors moved to the device, torch.cuda.empty_cache() calls, a
DataParallel forward and what the module forwards show (mode, autograd, device, autocast,
convolutions). Reads, moves, empty_cache calls and eval-mode forwards with autograd count only
where the user's code made them (_user_frame): a call from torch, gpufeed, the standard library
or a framework's own loop is not the user's to change. Counts inside an implicit step wait for
the next request for input (state.Habits): the code after a loop's last batch is not a step."""

from __future__ import annotations

import os
import sys
from typing import Any

from .. import _native, _profile_state
from .state import Habits
from .torch_patches import unwatch_tensors, watch_tensors

_HOST_READS = ("item", "cpu", "numpy", "tolist")


def _user_frame(depth: int = 2) -> Any:
    """Where the user's code made the call: the first caller outside torch, gpufeed and the
    standard library (a call through them is its caller's), or None when that caller is
    another installed package's. A framework's own loop (Lightning's, Accelerate's, a
    transformers Trainer's) is not the user's to change, however it reads or frees tensors."""
    frame = sys._getframe(depth)
    while frame is not None:
        owner = _code_owner(frame.f_code.co_filename)
        if owner != "through":
            return frame if owner == "user" else None
        frame = frame.f_back
    return None


_LIBRARY_DIRS: tuple = ()  # torch's and gpufeed's directories
_STDLIB_DIRS: tuple = ()  # the standard library's (site-packages may lie inside it)
_PACKAGE_DIRS: tuple = ()  # the frameworks' directories, wherever they are installed
_INSTALLED = tuple(f"{os.sep}{d}{os.sep}" for d in ("site-packages", "dist-packages"))
_FRAMEWORKS = ("lightning", "pytorch_lightning", "lightning_fabric", "accelerate", "transformers")
_code_owners: dict = {}  # file -> "through", "package" or "user"


def _code_owner(path: str) -> str:
    """Whose code a file is: "through" (torch, gpufeed, the standard library), "package"
    (another installed package) or "user"."""
    owner = _code_owners.get(path)
    if owner is None:
        if path.startswith(_LIBRARY_DIRS) or path.startswith("<frozen "):
            owner = "through"
        elif path.startswith(_PACKAGE_DIRS) or any(d in path for d in _INSTALLED):
            owner = "package"
        elif path.startswith(_STDLIB_DIRS):
            owner = "through"
        else:
            owner = "user"
        _code_owners[path] = owner
    return owner


def _find_code_owners(torch: Any) -> None:
    """The directories _code_owner sorts files by."""
    global _LIBRARY_DIRS, _STDLIB_DIRS, _PACKAGE_DIRS
    import sysconfig

    def directories(paths: Any) -> tuple:
        return tuple(sorted({os.path.join(p, "") for p in paths if p}))

    gpufeed = os.path.dirname(_native.__file__)  # the package's directory, with its subpackages
    _LIBRARY_DIRS = directories((os.path.dirname(torch.__file__), gpufeed))
    _STDLIB_DIRS = directories(sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib"))
    _PACKAGE_DIRS = directories(os.path.dirname(getattr(sys.modules[name], "__file__", None) or "")
                                for name in _FRAMEWORKS if name in sys.modules)
    _code_owners.clear()


def _count(current: Any, counts_of: Any, name: str) -> None:
    """One call `name` made inside a step by the user's code, counted where it was written."""
    frame = _user_frame(3)
    if frame is not None:
        key = (frame.f_code.co_filename, frame.f_lineno, name)
        current.habits.count(counts_of(current.habits), key, current.steps.depth > 0)


def _host_read(name: str) -> Any:
    def make(original: Any) -> Any:
        def counted(tensor: Any, *args: Any, **kwargs: Any) -> Any:
            current = _profile_state.active
            # A host tensor's .cpu() reads nothing: it is the tensor itself.
            if current is not None and current.steps.inside() and not (
                    name == "cpu" and tensor.device.type == "cpu"):
                _count(current, lambda h: h.host_reads, name)
            return original(tensor, *args, **kwargs)

        return counted

    return make


def _moved(name: str) -> Any:
    def make(original: Any) -> Any:
        def counted(tensor: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(tensor, *args, **kwargs)
            current = _profile_state.active
            if (current is not None and current.steps.inside() and result is not tensor
                    and tensor.device.type == "cpu" and result.device.type != "cpu"
                    and not _in_last_batch(current, tensor)):
                _count(current, lambda h: h.host_moves, name)
            return result

        return counted

    return make


def _data_parallel(original: Any) -> Any:
    def forward(module: Any, *args: Any, **kwargs: Any) -> Any:
        current = _profile_state.active
        if current is not None:
            current.habits.data_parallel = True
        return original(module, *args, **kwargs)

    return forward


def _empty_cache(original: Any) -> Any:
    def counted() -> None:
        current = _profile_state.active
        if current is not None and current.steps.inside() and _user_frame() is not None:
            current.habits.empty_cache_calls += 1
        return original()

    return counted


def watch_habits(torch: Any) -> None:
    """While a profile runs: counts the loop's habits inside its steps, calls only from the
    user's code (_user_frame). Undone by unwatch_habits()."""
    global _forward_hook
    if _forward_hook is not None:
        return
    _find_code_owners(torch)
    makers = {(torch.Tensor, name): _host_read(name) for name in _HOST_READS}
    makers.update({(torch.Tensor, name): _moved(name) for name in ("to", "cuda")})
    makers[(torch.nn.DataParallel, "forward")] = _data_parallel
    makers[(torch.cuda, "empty_cache")] = _empty_cache

    def forward_seen(module: Any, inputs: Any) -> None:
        current = _profile_state.active
        if current is not None and current.steps.inside():
            _forward_seen(current, torch, module, inputs)

    _forward_hook = watch_tensors(torch, makers, forward_seen)


_forward_hook: Any = None  # the global forward pre-hook while a profile watches


def _storage(tensor: Any) -> int:
    """Where a tensor's memory starts (a view of a batch has its batch's storage)."""
    try:
        storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") else \
            tensor.storage()
        return storage.data_ptr()
    except (RuntimeError, NotImplementedError):
        return tensor.data_ptr()


def _batch_storages(batch: Any) -> set:
    """The storages of a batch's tensors (a tensor, a tuple/list/dict of them, a gpufeed Batch)."""
    if hasattr(batch, "images") and hasattr(batch, "labels"):
        batch = (batch.images, batch.labels)
    if isinstance(batch, dict):
        batch = list(batch.values())
    if not isinstance(batch, (tuple, list)):
        batch = (batch,)
    return {_storage(t) for t in batch if hasattr(t, "data_ptr") and hasattr(t, "device")}


def unwatch_habits() -> None:
    global _forward_hook
    hook, _forward_hook = _forward_hook, None
    unwatch_tensors(hook)


def _in_last_batch(prof: Any, tensor: Any) -> bool:
    """Whether `tensor` is (a view of) the last batch's: moving it to the device is expected."""
    waits = prof.waits
    if waits.last_storages is None:
        waits.last_storages = _batch_storages(waits.last_batch)
    return _storage(tensor) in waits.last_storages


def _inference_mode(torch: Any) -> bool:
    is_inference = getattr(torch, "is_inference_mode_enabled", None)
    return bool(is_inference()) if is_inference is not None else False


def _forward_seen(prof: Any, torch: Any, module: Any, inputs: Any) -> None:
    """A module's forward inside a step: its mode, autograd, device, autocast, kind."""
    prof._batch_used(module.training)
    seen = prof.habits.forwards
    seen.forwards = True
    if module.training:
        seen.training_forwards = True
    elif torch.is_grad_enabled() and not _inference_mode(torch):
        frame = _user_frame(3)
        if frame is not None:  # the user's forward, not a framework's
            seen.eval_grad_forwards += 1
            if not seen.eval_grad_site:
                seen.eval_grad_site = f"{os.path.basename(frame.f_code.co_filename)}:" \
                                      f"{frame.f_lineno}"
    if not seen.cuda_forwards and any(getattr(x, "is_cuda", False) for x in inputs):
        seen.cuda_forwards = True
    if seen.cuda_forwards and not seen.autocast_dtype and torch.is_autocast_enabled():
        seen.autocast_dtype = str(torch.get_autocast_gpu_dtype()).replace("torch.", "")
    if not seen.convolutions and isinstance(module, torch.nn.modules.conv._ConvNd):
        seen.convolutions = True


def sites(counts: dict) -> list:
    """{(file, line, method): count} as sites, the commonest first."""
    found = [
        {"where": f"{os.path.basename(path)}:{line}", "call": f".{name}()", "count": count,
         "file": path}
        for (path, line, name), count in counts.items()
    ]
    return sorted(found, key=lambda s: -s["count"])


def loop_habits(counted: Habits, torch: Any) -> _native.LoopHabits:
    """The habits `counted`, for the diagnosis (`torch`: the module, or None)."""
    reads = sites(counted.host_reads)
    habits = _native.LoopHabits()
    habits.host_reads = sum(site["count"] for site in reads)
    if reads:
        habits.host_read_site = f"{reads[0]['where']} {reads[0]['call']}"
    habits.data_parallel = counted.data_parallel
    habits.empty_cache_calls = counted.empty_cache_calls
    moves = sites(counted.host_moves)
    habits.host_tensor_moves = sum(site["count"] for site in moves)
    if moves:
        habits.host_tensor_site = f"{moves[0]['where']} {moves[0]['call']}"
    seen = counted.forwards
    for name in ("eval_grad_forwards", "eval_grad_site", "forwards", "training_forwards",
                 "cuda_forwards", "autocast_dtype", "convolutions"):
        setattr(habits, name, getattr(seen, name))
    if torch is not None and seen.cuda_forwards:
        habits.bf16_supported = bool(torch.cuda.is_bf16_supported())
        habits.cudnn_benchmark = bool(torch.backends.cudnn.benchmark)
    return habits
