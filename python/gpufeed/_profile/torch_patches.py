"""Every patch of torch's internals a profile makes, in one place, each checked against the torch
it runs on before it is made: a DataLoader iterator's ``__next__`` and ``DataLoader._get_iterator``
(waits timed, worker pools started with the profile's worker_init_fn), the fetchers' ``fetch``
(the Dataset's items and collate_fn timed), the worker pool's ``_try_put_index`` (which samples
each worker was sent), ``Tensor.item/.cpu/.numpy/.tolist/.to/.cuda``, ``DataParallel.forward``,
``torch.cuda.empty_cache`` and a global module forward pre-hook (the loop's habits).

Where a torch lacks what a patch needs, the patch is not made and the profile says so once
(stderr and ``results().notes``): without the iterators' internals each DataLoader ``next()``
is timed as a whole through ``DataLoader.__iter__`` (no fetches, no probe, no workers' samples).
A patch's own bookkeeping never breaks the loop: the original runs whatever it does."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Callable, Optional

from .. import _profile_state
from . import probe

_MISSING = object()


@dataclasses.dataclass
class TorchSupport:
    """What the torch this process runs can be profiled with, and notes on what it cannot."""

    version: str = ""
    iterators: bool = False  # _BaseDataLoaderIter.__next__ and DataLoader._get_iterator
    fetchers: bool = False  # _MapDatasetFetcher.fetch / _IterableDatasetFetcher.fetch
    worker_tasks: bool = False  # _MultiProcessingDataLoaderIter._try_put_index
    tensors: bool = False  # Tensor methods, DataParallel, empty_cache, forward pre-hooks
    notes: list = dataclasses.field(default_factory=list)


def _has(owner: Any, *names: str) -> bool:
    return all(callable(getattr(owner, name, None)) for name in names)


def check(torch: Any) -> TorchSupport:
    """What of `torch`'s internals the patches find, by name, before any is made."""
    support = TorchSupport(version=str(getattr(torch, "__version__", "?")))
    try:
        from torch.utils.data import dataloader
        from torch.utils.data._utils import fetch
    except ImportError as error:
        support.notes.append(f"torch {support.version}: no DataLoader internals ({error})")
        return support
    iterator = getattr(dataloader, "_BaseDataLoaderIter", None)
    support.iterators = (_has(iterator, "__next__", "_next_data", "_next_index")
                         and _has(dataloader.DataLoader, "_get_iterator"))
    if not support.iterators:
        support.notes.append(
            f"torch {support.version}'s DataLoader iterators are not the ones gpufeed knows: "
            "each next() is timed as a whole (its fetches, its workers and the warm-step probe "
            "are not seen)")
    support.fetchers = support.iterators and all(
        _has(getattr(fetch, name, None), "fetch")
        for name in ("_MapDatasetFetcher", "_IterableDatasetFetcher"))
    if support.iterators and not support.fetchers:
        support.notes.append(f"torch {support.version}'s DataLoader fetchers are not the ones "
                             "gpufeed knows: the Dataset's items and collate_fn are not timed")
    pool = getattr(dataloader, "_MultiProcessingDataLoaderIter", None)
    support.worker_tasks = support.iterators and _has(pool, "_try_put_index")
    tensor = getattr(torch, "Tensor", None)
    support.tensors = (_has(tensor, "item", "cpu", "numpy", "tolist", "to", "cuda")
                       and callable(getattr(torch.nn.modules.module,
                                            "register_module_forward_pre_hook", None)))
    if not support.tensors:
        support.notes.append(f"torch {support.version}: the loop's habits (host reads, moves) "
                             "are not counted")
    return support


class _Patches:
    """The patches in place, by group, with the originals to restore."""

    def __init__(self) -> None:
        self.groups: dict = {}  # group -> [(owner, name, original or _MISSING)]

    def patch(self, group: str, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        original = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else \
            getattr(owner, name)
        setattr(owner, name, make(getattr(owner, name)))
        self.groups.setdefault(group, []).append((owner, name, original))

    def restore(self, group: str) -> None:
        for owner, name, original in reversed(self.groups.pop(group, [])):
            if original is _MISSING:
                delattr(owner, name)  # the class inherits it again
            else:
                setattr(owner, name, original)

    def holds(self, group: str) -> bool:
        return bool(self.groups.get(group))


patches = _Patches()


class TimedIterator:
    """An iterator whose every ``next()`` is a wait for input on the profile running then."""

    __slots__ = ("_next",)

    def __init__(self, iterator: Any) -> None:
        self._next = iterator.__next__

    def __iter__(self) -> "TimedIterator":
        return self

    def __next__(self) -> Any:
        current = _profile_state.active
        if current is None:
            return self._next()
        return current._timed_next(self._next, None)


def time_dataloaders(support: TorchSupport, worker_init: Callable, started: Callable) -> None:
    """While a profile runs: every DataLoader iterator's ``next()`` is a wait for input, and
    each iterator's start is told to `started(iterator, loader)`, its workers started with
    `worker_init(loader, its own worker_init_fn)`. Kept while a probe's batch is held."""
    if patches.holds("dataloader"):
        return
    from torch.utils.data import dataloader

    if not support.iterators:
        patches.patch("dataloader", dataloader.DataLoader, "__iter__",
                      lambda original: lambda loader: TimedIterator(original(loader)))
        return

    def timed_next(next_original: Any) -> Any:
        def __next__(iterator: Any) -> Any:
            current = _profile_state.active
            if current is None:
                # No profile: a batch its probe took early is still returned, first.
                try:
                    took, batch, _ = probe.take_held(iterator)
                finally:
                    if not probe.holding():
                        untime_dataloaders()
                return batch if took else next_original(iterator)
            return current._timed_next(next_original, iterator)

        return __next__

    def started_iterator(get_iterator: Any) -> Any:
        def _get_iterator(loader: Any) -> Any:
            current = _profile_state.active
            if current is None or loader.num_workers == 0:
                iterator = get_iterator(loader)
            else:
                init = loader.worker_init_fn
                loader.worker_init_fn = worker_init(loader, init)
                try:
                    iterator = get_iterator(loader)
                finally:
                    loader.worker_init_fn = init
            if current is not None:
                started(iterator, loader)
            return iterator

        return _get_iterator

    patches.patch("dataloader", dataloader._BaseDataLoaderIter, "__next__", timed_next)
    patches.patch("dataloader", dataloader.DataLoader, "_get_iterator", started_iterator)
    if support.worker_tasks:
        patches.patch("dataloader", dataloader._MultiProcessingDataLoaderIter,
                      "_try_put_index", _noted_tasks)


def _noted_tasks(try_put_index: Any) -> Any:
    """The worker pool's ``_try_put_index``, with the samples it sends to a worker noted (the
    sampler's indices pass through the iterator's ``_next_index``)."""

    def _try_put_index(iterator: Any) -> None:
        current = _profile_state.active
        if current is None:
            return try_put_index(iterator)
        before = iterator._send_idx
        own = iterator.__dict__.get("_next_index", _MISSING)
        next_index = iterator._next_index
        taken: list = []

        def noted() -> Any:
            taken.append(next_index())
            return taken[-1]

        iterator._next_index = noted
        try:
            try_put_index(iterator)
        finally:
            if own is _MISSING:
                del iterator._next_index
            else:
                iterator._next_index = own
        if taken and iterator._send_idx != before:
            try:
                current._dataloaders.sent(iterator, before, taken[-1])
            except Exception as error:  # noqa: BLE001 - the profile's bookkeeping: never the loop's
                current._internal_error("noting a worker's samples", error)

    return _try_put_index


def untime_dataloaders() -> None:
    """The DataLoaders' own methods again, unless a probe's batch is still held: then the
    patched ``__next__`` returns it first and restores them once it did."""
    time_fetchers(None)
    if not probe.holding():
        patches.restore("dataloader")


def time_fetchers(counters: Any) -> None:
    """Times DataLoader fetchers (the dataset's items and collate) in this process into
    `counters` (fetches.FetchCounters); None stops it. Also called in each worker process."""
    from . import fetches

    fetches.set_counters(counters)
    if counters is None:
        patches.restore("fetchers")
        return
    if patches.holds("fetchers"):
        return
    from torch.utils.data._utils import fetch

    for cls in (fetch._MapDatasetFetcher, fetch._IterableDatasetFetcher):
        patches.patch("fetchers", cls, "fetch", fetches.timed_fetch)


def watch_tensors(torch: Any, makers: dict, forward_hook: Callable) -> Optional[Any]:
    """The habit patches: `makers` maps (owner, name) to the factory of its wrapper; the forward
    pre-hook is registered. Returns the hook's handle."""
    for (owner, name), make in makers.items():
        patches.patch("habits", owner, name, make)
    return torch.nn.modules.module.register_module_forward_pre_hook(forward_hook)


def unwatch_tensors(hook: Optional[Any]) -> None:
    if hook is not None:
        hook.remove()
    patches.restore("habits")


def torch_module() -> Optional[Any]:
    """torch, when the process imported it (a profile never imports it itself)."""
    return sys.modules.get("torch")
