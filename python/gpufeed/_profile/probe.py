"""The warm-step probe. A step that follows a wait for input runs on cold caches (a CPU step: 0.9
ms back to back, 1.4 ms after a 10 ms wait), and a loop that waits for every batch never shows
its step any other way; the advice needs it, since the loop it predicts waits less. So every
PROBE_EVERY batches a profile takes two batches at once from a DataLoader and holds the second
for the iterator's next call: the step on it follows the step before it.

What the loop gets does not change. The batches, their order and their errors are the
iterator's: a held batch is returned by the next call (after the profile too), an error taking
it is raised there, a batch of an epoch the iterator left (a persistent iterator reset) is
dropped as the reset drops the batches it made, and never an epoch's end is taken early. With
workers, the batches' random draws are the workers' own. Without them, loading draws the
process's own generators (torch's, Python's, NumPy's), so a batch is taken early only when the
step before showed it draws nothing from them; the generators are put back as they were before
it was loaded, and, if the step draws nothing, as they were after: every number drawn is the
one drawn without the profile. A step that drew anyway has its batch loaded again from the
generators as the step left them, and its DataLoader is not probed again."""

from __future__ import annotations

import random
import sys
import weakref
from typing import Any, NamedTuple, Optional


PROBE_EVERY = 16  # batches between two probes


class _Held(NamedTuple):
    epoch: Any  # the iterator's sampler iterator when the batch was taken
    batch: Any
    error: Optional[BaseException]
    index: Any = None  # without workers: the batch's indices, to load it again
    before: Any = None  # without workers: the generators' states before it was loaded
    after: Any = None  # and after


_held: "weakref.WeakKeyDictionary[Any, _Held]" = weakref.WeakKeyDictionary()
# Without workers: the generators' states at the end of the wait before a probe's first step.
_noted: "weakref.WeakKeyDictionary[Any, tuple]" = weakref.WeakKeyDictionary()
_drawing: "weakref.WeakSet[Any]" = weakref.WeakSet()  # their steps draw: never taken early


def holding() -> bool:
    """Whether a batch taken early waits for its iterator's next call."""
    return bool(_held)


def before_fetch(iterator: Any) -> bool:
    """The profile is about to take a batch from `iterator`: whether the step before left the
    generators as they were noted (a step that drew nothing; the probe may then take the next
    batch early). One that drew: the iterator is never probed again."""
    noted = _noted.pop(iterator, None)
    if noted is None:
        return False
    if _same(noted, generator_states()):
        return True
    _drawing.add(iterator)
    return False


def after_fetch(iterator: Any, fetch: Any, batches: int, quiet: bool) -> None:
    """The profile took batch number `batches` from `iterator` with `fetch(iterator)`, after a
    step that was `quiet` (before_fetch): on a probe's batch, the next one is taken too."""
    phase = batches % PROBE_EVERY
    in_process = getattr(iterator, "_num_workers", 0) == 0
    if phase == PROBE_EVERY // 2 - 1 and in_process and _in_process_ok(iterator):
        _noted[iterator] = generator_states()
    elif phase == PROBE_EVERY // 2 and _may_take_early(iterator, in_process, quiet):
        _hold(iterator, fetch, in_process)


def take_held(iterator: Any) -> tuple:
    """(taken, batch, warm): the batch held for `iterator` (taken: False when none is), and
    whether it comes with no loading before it. The exception taking it raised is raised
    here."""
    if not _held:
        return False, None, False
    entry = _held.pop(iterator, None)
    if entry is None or entry.epoch is not getattr(iterator, "_sampler_iter", None):
        return False, None, False
    if entry.before is not None:
        if not _same(entry.before, generator_states()):
            # The step drew from the generators the loading draws: the batch is loaded again
            # from them as the step left them, as the loop would have loaded it.
            _drawing.add(iterator)
            return True, _load(iterator, entry.index), False
        set_generator_states(entry.after)
    if entry.error is not None:
        raise entry.error
    return True, entry.batch, True


def _may_take_early(iterator: Any, in_process: bool, quiet: bool) -> bool:
    if iterator in _held:
        return False
    if in_process and not (quiet and _in_process_ok(iterator)):
        return False
    try:
        return len(iterator) - iterator._num_yielded >= 1  # never an epoch's end
    except (TypeError, AttributeError):  # an IterableDataset without a length
        return False


def _in_process_ok(iterator: Any) -> bool:
    """A DataLoader without workers over a map-style dataset whose steps were not seen to draw
    random numbers, with the parts loading a batch again needs."""
    from torch.utils.data import dataloader

    return (iterator not in _drawing
            and getattr(iterator, "_dataset_kind", None) == dataloader._DatasetKind.Map
            and hasattr(iterator, "_dataset_fetcher") and hasattr(iterator, "_next_index"))


def _hold(iterator: Any, fetch: Any, in_process: bool) -> None:
    epoch = getattr(iterator, "_sampler_iter", None)
    if not in_process:
        try:
            _held[iterator] = _Held(epoch, fetch(iterator), None)
        except Exception as error:  # noqa: BLE001 - raised at the call it belongs to
            _held[iterator] = _Held(epoch, None, error)
        return
    before = generator_states()
    taken: list = []
    next_index = iterator._next_index

    def noted_index() -> Any:
        taken.append(next_index())
        return taken[-1]

    iterator._next_index = noted_index  # the iterator's own __next__, its indices noted
    try:
        batch, error = fetch(iterator), None
    except Exception as error_:  # noqa: BLE001 - raised at the call it belongs to
        batch, error = None, error_
    finally:
        del iterator._next_index
    after = generator_states()
    set_generator_states(before)
    if not taken:  # the sampler itself failed: nothing to load again, raised at its call
        _held[iterator] = _Held(epoch, None, error, None, None, None)
        return
    _held[iterator] = _Held(epoch, batch, error, taken[-1], before, after)


def _load(iterator: Any, index: Any) -> Any:
    """The batch of `index`, loaded as the iterator's own _next_data loads it."""
    from torch.utils.data import _utils

    batch = iterator._dataset_fetcher.fetch(index)
    if getattr(iterator, "_pin_memory", False):
        batch = _utils.pin_memory.pin_memory(batch, getattr(iterator, "_pin_memory_device", None))
    return batch


def generator_states() -> tuple:
    """The process's random generators that loading draws from: torch's CPU one, Python's,
    NumPy's global one (when NumPy is imported)."""
    import torch

    numpy = sys.modules.get("numpy")
    return (torch.get_rng_state(), random.getstate(),
            numpy.random.get_state() if numpy is not None else None)


def set_generator_states(states: tuple) -> None:
    import torch

    torch.set_rng_state(states[0])
    random.setstate(states[1])
    numpy = sys.modules.get("numpy")
    if numpy is not None and states[2] is not None:
        numpy.random.set_state(states[2])


def _same(a: tuple, b: tuple) -> bool:
    import torch

    if not torch.equal(a[0], b[0]) or a[1] != b[1]:
        return False
    if a[2] is None or b[2] is None:
        return a[2] is b[2]
    numpy = sys.modules["numpy"]
    return (a[2][0] == b[2][0] and numpy.array_equal(a[2][1], b[2][1])
            and tuple(a[2][2:]) == tuple(b[2][2:]))

