"""The profile object: records a training loop, times its inputs and diagnoses it."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Optional, Union

from .. import _native, _profile_state
from . import advice, outputs, probe
from .dataloader import (DataLoaders, ProfiledInput, batch_shape, time_dataloaders,
                         untime_dataloaders)
from .habits import loop_habits, unwatch_habits, watch_habits

PathLike = Union[str, "os.PathLike[str]"]


def _job_place(torch: Any) -> tuple:
    """(rank, world_size) of this process in a distributed job, or (-1, 0)."""
    distributed = getattr(torch, "distributed", None) if torch is not None else None
    if distributed is not None and distributed.is_available() and distributed.is_initialized():
        return distributed.get_rank(), distributed.get_world_size()
    try:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    except (KeyError, ValueError):
        return -1, 0
    return (rank, world) if world > 1 else (-1, 0)


_cupti_searched = False


def _add_cupti_directories() -> None:
    """Once a process: the directories of PyTorch's nvidia wheels that hold CUPTI
    (nvidia/<package>/lib/libcupti.so.*), for the native profiler to load it from when no CUDA
    toolkit is installed."""
    global _cupti_searched
    if _cupti_searched:
        return
    _cupti_searched = True
    import glob

    for entry in sys.path:
        for library in sorted(glob.glob(os.path.join(entry or ".", "nvidia", "*", "lib",
                                                     "libcupti.so*"))):
            _native.add_cupti_directory(os.path.dirname(library))


class _Range:
    """`with`: records one range of a registered name on the calling thread."""

    __slots__ = ("_native", "_name", "_index", "_begin")

    def __init__(self, native: _native.Profile, name: int, index: int) -> None:
        self._native = native
        self._name = name
        self._index = index
        self._begin = 0

    def __enter__(self) -> "_Range":
        self._begin = _native.now_ns()
        return self

    def __exit__(self, *exc: object) -> None:
        self._native.record(self._name, self._begin, _native.now_ns(), self._index)


class _StepRange(_Range):
    """``with prof.step():``: a "step" range, during which the profile counts the loop's
    habits (host reads of tensors) as the step's."""

    __slots__ = ("_prof",)

    def __init__(self, prof: "profile", native: _native.Profile, name: int, index: int) -> None:
        super().__init__(native, name, index)
        self._prof = prof

    def __enter__(self) -> "_StepRange":
        self._prof._marked_depth += 1
        super().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        end = _native.now_ns()
        super().__exit__(*exc)
        prof = self._prof
        prof._marked_depth -= 1
        if prof._warm_batch == prof._batches and self._index == prof._steps_at_batch:
            prof._warm_step(end - self._begin)  # the first step on a probe's batch


class profile:
    """Records a training loop and diagnoses it as pipebench does: device utilization, idle
    time by cause (waiting for input, host syncs, launch overhead, other), the verdict, the
    loader stage that holds it back, recommendations with their predicted effect, and the
    practice checks.

        with gpufeed.profile(report="run.html", trace="run.json", json="run.profile.json") as prof:
            for images, labels in loader.epoch(0):
                with prof.step():
                    loss = train_step(images, labels)
        print(prof.summary())

    Any loop over a torch DataLoader is recorded as it is: while the profile runs, every
    DataLoader iterator's ``next()`` is timed as a wait for input, and without ``prof.step()``
    a step is the time from one batch to the request for the next, so

        with gpufeed.profile() as prof:
            for images, labels in dataloader:
                train_step(images, labels)

    is enough. When such a loop waited for a DataLoader whose dataset's items are the cost, the
    profile measures the remedy after the loop: up to 64 of the items (about a second of
    them) packed as ``gpufeed.pack`` would, read back by a gpufeed.Loader on every core, and
    the advice says what that rate predicts (``measure_pack=False`` skips it). Every 16
    batches the profile takes two at once from the DataLoader, to time a step that follows
    another with no wait (a step after a wait runs on cold caches; the advice predicts a loop
    that waits less): the loop gets the same batches in the same order, with the same random
    numbers. Without workers the next batch is then loaded before the step on the last one: a
    loop whose steps change its Dataset's own settings mid-epoch would see that change one batch
    late there (``probe_steps=False`` turns the probe off).
    ``prof.input(iterable)`` times any other input the same way (a generator, a
    WebDataset or Hugging Face pipeline, a DALI iterator); a gpufeed.Loader times itself.

    Mark each training step with ``prof.step()`` where it is not the whole loop body: the steps
    are what utilization is measured against (on a CUDA device CUPTI's kernel records are, and
    the steps set the window). On a
    CUDA device CUPTI also sees host syncs (``.item()``, ``.cpu()``, ``synchronize``) and
    launches by itself; ``prof.sync()`` marks a sync of your own. The gpufeed.Loader seen
    during the profile (the busiest, if several) supplies the input side. ``trace`` opens in
    Perfetto, ``pipebench analyze`` reads it too. The outputs are written when the block ends,
    also when it ends with an exception (Ctrl-C included).

    In a job of several ranks (torch.distributed initialized, or RANK/WORLD_SIZE set) each
    rank writes its own files: "{rank}" in a path becomes the rank, else ".rankR" goes before
    the extension (run.json -> run.rank1.json), and the trace records the rank.
    ``prof.watch(ddp_model)`` times DistributedDataParallel's gradient all-reduces as
    collectives, so ``pipebench analyze run.rank*.json`` can tell which rank the others waited
    for and how long.
    """

    def __init__(
        self,
        *,
        report: Optional[PathLike] = None,
        trace: Optional[PathLike] = None,
        json: Optional[PathLike] = None,
        cuda: Optional[bool] = None,
        measure_pack: bool = True,
        probe_steps: bool = True,
    ) -> None:
        self._outputs = {
            "report": None if report is None else os.fspath(report),
            "trace": None if trace is None else os.fspath(trace),
            "json": None if json is None else os.fspath(json),
        }
        self._cuda = cuda
        self._measure_pack = measure_pack
        self._probe_steps = probe_steps
        self._native: Optional[_native.Profile] = None
        self._report: Optional[_native.ProfileReport] = None
        self._loaders: dict[int, list] = {}  # id -> [loader, baseline, epochs]
        self._steps = 0
        self._step_name = _native.range_name("step")
        self._sync_name = _native.range_name("sync")
        self._collective_name = _native.range_name("collective")
        self._rank, self._world_size = -1, 0
        self._wait_name = _native.range_name("wait")
        self._batches = 0  # batches the timed inputs delivered
        self._timed_samples = 0  # their samples (the first dimension of each batch's images)
        self._implicit_steps = 0
        self._step_begin: Optional[int] = None  # the last timed batch's arrival
        self._steps_at_batch = 0
        # The warm-step probe (probe.py): now and then two batches are taken at once, so the
        # step on the second follows the step before it with no wait: its time (in
        # _warm_steps) is the step's on warm caches, which a loop that waits for every batch
        # never shows and the advice's prediction needs.
        self._warm_batch = -1  # the number of the batch a probe held, once delivered
        self._warm_steps: dict = {}  # id(DataLoader) -> its probes' step times
        self._dataloaders = DataLoaders()  # the DataLoaders timed, each with its counters
        self._last_input: Optional[int] = None  # the DataLoader of the last timed batch
        self._wait_ns = 0  # the timed inputs' waits, summed
        self._wait_cpu_ns = 0  # the process's CPU time in those waits (loading, unpickling)
        self._entered_ns = 0
        self._entered_cpu_ns = 0
        self._exited_ns = 0
        self._marked_depth = 0  # inside `with prof.step()`
        self._host_reads: dict = {}  # (file, line, method) -> calls inside steps
        self._data_parallel = False
        self._empty_cache_calls = 0
        self._host_moves: dict = {}  # (file, line, method) -> host tensors moved inside steps
        # The last batch (moving its tensors is expected) and their storages, found only when
        # a host tensor is moved.
        self._last_batch: Any = None
        # The batch before it, while the step runs: a DataLoader's batch from its workers lives
        # in shared memory, and releasing it (unmapping it, closing its file) took 0.16 ms of a
        # 1.5 ms step. Held until the next wait for input releases it, it is the input's cost,
        # not the step's (a batch on a CUDA device is never held: its memory is the device's).
        self._previous_batch: Any = None
        self._last_storages: Optional[set] = None
        self._forwards = _native.LoopHabits()  # what the module forwards inside steps showed

    def __enter__(self) -> "profile":
        for what, path in self._outputs.items():
            if path is not None:
                _native.check_writable(what, path)
        cuda = self._cuda if self._cuda is not None else _native.cuda_device_count() > 0
        if cuda:
            _add_cupti_directories()
        with _profile_state.lock:
            if _profile_state.active is not None:
                raise _native.UsageError("a gpufeed.profile is already running in this process")
            self._native = _native.Profile(cuda)
            self._entered_ns = _native.now_ns()
            self._entered_cpu_ns = time.process_time_ns()
            _profile_state.active = self
        time_dataloaders(self._dataloaders.main_fetches)
        watch_habits()
        return self

    def _in_step(self) -> bool:
        """Inside a marked step, or inside an implicit one (a batch arrived, no step marked)."""
        return self._marked_depth > 0 or (
            self._step_begin is not None and self._steps == self._steps_at_batch
        )

    def input(self, iterable: Any) -> Any:
        """``for batch in prof.input(iterable):`` times each ``next()`` of any iterable as a
        wait for input (DataLoaders are timed without it; a gpufeed.Loader times itself and is
        returned as it is)."""
        if hasattr(iterable, "__gpufeed_counters__"):
            return iterable
        return ProfiledInput(iterable)

    def _timed_next(self, fetch: Any, source: Any) -> Any:
        """One batch from a timed input, `fetch(source)` for a DataLoader iterator `source`
        (`fetch()` for any other): the wait for it is a "wait" range; without prof.step() the
        time since the previous batch, less this wait, is a step. Now and then the next batch is
        taken too and held for the next call (probe.py); the batch before the last is released
        here, inside the wait."""
        native = self._native
        if native is None:
            return fetch() if source is None else fetch(source)
        key = None if source is None else self._dataloaders.key_of(source)
        begin = _native.now_ns()
        if self._step_begin is not None:
            self._close_step(begin)
        cpu = time.process_time_ns()
        self._previous_batch = None
        warm = False
        try:
            if source is None:
                item = fetch()
            else:
                took, item, warm = probe.take_held(source)
                if not took:
                    quiet = self._probe_steps and probe.before_fetch(source)
                    item = fetch(source)
                    if self._probe_steps:
                        probe.after_fetch(source, fetch, self._batches, quiet)
        except StopIteration:
            native.record(self._wait_name, begin, _native.now_ns(), self._batches)
            raise
        finally:
            self._wait_cpu_ns += time.process_time_ns() - cpu
        end = _native.now_ns()
        native.record(self._wait_name, begin, end, self._batches)
        self._wait_ns += end - begin
        self._batches += 1
        if warm:
            self._warm_batch = self._batches
        shape = batch_shape(item)
        if shape:
            self._timed_samples += shape[0]
        if key is not None and not self._dataloaders.cuda_batches:
            self._previous_batch = self._last_batch
        self._last_batch, self._last_storages = item, None
        self._step_begin = end
        self._steps_at_batch = self._steps
        self._last_input = key
        if key is not None:
            self._dataloaders.delivered(key, source, item, shape, end)
        return item

    def _warm_step(self, ns: int) -> None:
        """The step on a probe's batch took `ns`: a step of the DataLoader that delivered it."""
        self._warm_steps.setdefault(self._last_input, []).append(ns)

    def _batch_used(self, training: bool) -> None:
        """A module ran, in training mode or not, inside the step of the last timed batch."""
        if self._last_input is not None:
            self._dataloaders.counters[self._last_input].used(self._batches, training)

    def _loader_next(self, fetch: Any) -> Any:
        """A gpufeed Loader's next batch, `fetch()`: the loader records its wait itself; without
        prof.step() the time since its previous batch, less this wait, is a step."""
        begin = _native.now_ns()
        if self._step_begin is not None:
            self._close_step(begin)
        item = fetch()
        self._step_begin = _native.now_ns()
        self._steps_at_batch = self._steps
        self._last_batch, self._last_storages = item, None
        return item

    def _input_stage(self, name: str, begin: int, end: int) -> None:
        """Work of the input that runs on the consumer's thread after its batch arrived (a
        Loader's transform ops on the batch): a range of its own, and a wait for input, since
        the loop waits for it as for any other stage."""
        native = self._native
        if native is None:
            return
        native.record(_native.range_name(name), begin, end, self._batches)
        native.record(self._wait_name, begin, end, self._batches)
        self._wait_ns += end - begin

    def _close_step(self, end: int) -> None:
        """Records the work between the last timed batch and `end` as a step, unless the loop
        marked its steps itself."""
        begin, self._step_begin = self._step_begin, None
        if begin is None or self._steps != self._steps_at_batch or self._native is None:
            return
        if self._warm_batch == self._batches:
            self._warm_step(end - begin)
        self._native.record(self._step_name, begin, end, self._implicit_steps)
        self._implicit_steps += 1

    def step(self) -> _Range:
        """``with prof.step():`` around one training step (forward, backward, update)."""
        if self._native is None:
            raise _native.UsageError("prof.step() outside its `with gpufeed.profile()` block")
        index = self._steps
        self._steps += 1
        return _StepRange(self, self._native, self._step_name, index)

    def sync(self) -> _Range:
        """``with prof.sync():`` around a host synchronization of your own (CUPTI finds the
        CUDA ones by itself)."""
        if self._native is None:
            raise _native.UsageError("prof.sync() outside its `with gpufeed.profile()` block")
        return _Range(self._native, self._sync_name, self._steps)

    def watch(self, model: Any) -> Any:
        """Times the gradient all-reduces of a torch DistributedDataParallel ``model`` (its
        default hook, wrapped) as "collective" ranges: from the start of each bucket's
        all-reduce until every rank's part arrived. Returns the model."""
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        native, name = self._native, self._collective_name
        if native is None:
            raise _native.UsageError("prof.watch() outside its `with gpufeed.profile()` block")

        def timed_allreduce(state, bucket):
            begin = _native.now_ns()
            future = default_hooks.allreduce_hook(state, bucket)

            def arrived(done):
                native.record(name, begin, _native.now_ns(), -1)
                return done.value()[0] if isinstance(done.value(), list) else done.value()

            return future.then(arrived)

        model.register_comm_hook(None, timed_allreduce)
        return model

    @staticmethod
    def current() -> Optional["profile"]:
        """The profile running in this process, or None."""
        return _profile_state.active

    def _see(self, source: Any) -> None:
        entry = self._loaders.get(id(source))
        if entry is None:
            self._loaders[id(source)] = [source, source.__gpufeed_counters__(), 1]
        else:
            entry[2] += 1

    def _busiest_loader(self):
        best = None
        best_samples = -1
        for loader, baseline, epochs in self._loaders.values():
            if loader.closed:
                continue
            samples = loader.stats()["samples"]
            if samples > best_samples:
                best, best_samples = (loader, baseline, epochs), samples
        return best

    def __exit__(self, *exc: object) -> None:
        self._exited_ns = _native.now_ns()
        self._close_step(self._exited_ns)  # the loop left after its last batch's work
        with _profile_state.lock:
            _profile_state.active = None
        untime_dataloaders()
        unwatch_habits()
        native, self._native = self._native, None
        native.stop()  # the run ends here: measuring a remedy below is not part of it
        loop = _native.LoopFacts()
        loop.steps = self._steps + self._implicit_steps
        torch = sys.modules.get("torch")
        if torch is not None:
            loop.torch_threads = torch.get_num_threads()
            loop.deterministic = bool(torch.are_deterministic_algorithms_enabled())
        self._rank, self._world_size = _job_place(torch)
        loop.rank, loop.world_size = self._rank, self._world_size
        self._dataloaders.settle()
        self._dataloaders.add_fetch_ranges(native)
        loop.input_pool = advice.input_pool(self)
        loop.habits = loop_habits(self, torch)
        self._dataloaders.datasets.clear()
        self._last_batch = self._last_storages = self._previous_batch = None
        busiest = self._busiest_loader()
        if busiest is None:
            self._report = native.finish(None, loop)
        else:
            source, baseline, epochs = busiest
            loop.epochs = epochs
            self._report = native.finish(source.__gpufeed_facts__(baseline), loop)
        outputs.write_outputs(self)

    def _finished(self) -> _native.ProfileReport:
        if self._report is None:
            raise _native.UsageError("the profile has not finished: use it after its `with` block")
        return self._report

    def summary(self) -> str:
        """The text pipebench prints: utilization, idle time by cause, verdict, bottleneck
        stage, recommendations, practice checks."""
        text = self._finished().summary()
        if self._batches:
            # The loop's input was timed even though no gpufeed.Loader fed it.
            text = text.replace(
                "note: no gpufeed.Loader ran inside the profile; input stages unknown\n",
                outputs.input_line(self))
        return text

    def results(self) -> dict:
        """The diagnosis as data: pipebench's --json keys (samples_per_s, device_util,
        idle_by_cause, bottleneck_stage, verdict, stages, echo, practices, profile, ...), and
        ``inputs``: the DataLoaders the loop read, each with its settings and its own counters
        (batches, samples, fetches, starts), its ``role`` ("training" or "evaluation", by the
        modules its batches went through) and whether it is the one ``diagnosed``: the one
        that fed the training steps, whose samples are ``samples``."""
        return outputs.results(self, self._finished())
