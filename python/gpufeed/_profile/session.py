"""The profile object: records a training loop, times its inputs and diagnoses it."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Optional, Union

from .. import _native, _profile_state
from . import outputs, torch_patches
from .dataloader import DataLoaders, ProfiledInput
from .finish import finish
from .habits import watch_habits
from .live import LiveFigures, RunRecord
from .results import ProfileResults
from .ranges import _Range, _StepRange, add_cupti_directories
from .timing import InputTiming
from .state import Clock, Habits, Probes, Steps, Waits, machine_busy_ns
from .watchdog import Watchdog


PathLike = Union[str, "os.PathLike[str]"]


class profile(InputTiming):
    """Records a training loop and diagnoses it as pipebench does: device utilization, idle
    time by cause (waiting for input, host syncs, launch overhead, other), the verdict, the
    loader stage that holds it back, recommendations with their predicted effect, and the
    practice checks.

        with gpufeed.profile(report="run.html", every=60) as prof:
            for images, labels in loader.epoch(0):
                with prof.step():
                    loss = train_step(images, labels)
        print(prof.summary())

    Any loop over a torch DataLoader is recorded as it is: while the profile runs, every
    DataLoader iterator's ``next()`` is timed as a wait for input, and without ``prof.step()``
    a step is the time from one batch to the request for the next (code after the loop's last
    batch is not a step), so

        with gpufeed.profile() as prof:
            for images, labels in dataloader:
                train_step(images, labels)

    is enough. ``prof.input(iterable)`` times any other input the same way (a generator, a
    WebDataset or Hugging Face pipeline, a DALI iterator); a gpufeed.Loader times itself.

    A run, not a window: the profile keeps bounded figures of every window of time and every
    epoch (input wait, steps busy, samples/s, each input stage's cost) for a run of days; the
    summary names a trend (a stage's cost or the input wait growing epoch after epoch) and the
    HTML report plots the whole run. ``every=60`` prints one line a minute on stderr (steps
    busy, input wait, samples/s, the worst stage) and hands the same figures
    (``gpufeed.profile.LiveFigures``) to ``callback`` and, as scalars, to ``tensorboard`` (a
    ``torch.utils.tensorboard.SummaryWriter``).

    When no batch has come for ``stall`` seconds (default: 30, or 30 times the loop's mean time
    a batch where that is longer; 0: never), the profile says once, on stderr and in its
    outputs, what each DataLoader worker holds (the samples sent to it and not returned, for
    how long), the sample it is in and its Python stack (faulthandler, armed in the workers by
    the profile: no signal is sent), or the loop's own stack without workers. The loop goes on
    waiting; Ctrl-C ends it with the report in the outputs. A worker that dies is explained:
    which, its signal, the samples it held, its memory sampled while it ran against the
    machine's and the cgroup's limits and the cgroup's OOM-kill counter, and what to do.

    The profile never makes a failure worse: when the loop ends with an exception nothing of
    the user's runs after it, the exception reaches the caller as it was with what the profile
    knows added as notes (PEP 678), and the outputs are written. When a clean loop waited for
    a DataLoader whose dataset's items are the cost, the profile measures the remedy after it,
    in a child process with a time and a memory limit: up to 64 of the items packed as
    ``gpufeed.pack`` would and read back by a gpufeed.Loader (``measure_pack=False`` skips it;
    its death or timeout is a rate "not measured", with why). Every 16 batches the profile takes
    two at once from the DataLoader, to time a step that follows another with no wait (the
    advice predicts a loop that waits less): the loop gets the same batches in the same order,
    with the same random numbers. Without workers the next batch is then loaded before the step
    on the last one: a loop whose steps change its Dataset's own settings mid-epoch would see
    that change one batch late there (``probe_steps=False`` turns the probe off).

    Mark each training step with ``prof.step()`` where it is not the whole loop body: the steps
    are what utilization is measured against (on a CUDA device CUPTI's kernel records are, and
    the steps set the window). On a CUDA device CUPTI also sees host syncs (``.item()``,
    ``.cpu()``, ``synchronize``) and launches by itself; ``prof.sync()`` marks a sync of your
    own. The gpufeed.Loader seen during the profile (the busiest, if several) supplies the
    input side. ``trace`` opens in Perfetto, ``pipebench analyze`` reads it too. The outputs
    are written when the block ends, also when it ends with an exception (Ctrl-C included).

    In a job of several ranks (torch.distributed initialized, or RANK/WORLD_SIZE set) each
    rank writes its own files: "{rank}" in a path becomes the rank, else ".rankR" goes before
    the extension (run.json -> run.rank1.json), and the trace records the rank.
    ``prof.watch(ddp_model)`` times DistributedDataParallel's gradient all-reduces as
    collectives, so ``pipebench analyze run.rank*.json`` can tell which rank the others waited
    for and how long.

    Args:
        report: An HTML report to write (timeline, utilization, the run's plot).
        trace: A Chrome trace to write (Perfetto; ``pipebench analyze`` reads it).
        json: The results as JSON (``prof.results()``).
        cuda: Record the device with CUPTI (default: when a CUDA device is in use).
        measure_pack: Measure the pack remedy after a clean loop (above).
        probe_steps: Time a step that follows another with no wait, every 16 batches.
        every: Seconds between live lines on stderr (None: none).
        callback: Called with the ``LiveFigures`` every ``every`` seconds.
        tensorboard: A ``SummaryWriter`` that receives the live figures as scalars.
        stall: Seconds without a batch before the stall report (0: never; default above).
    """

    LiveFigures = LiveFigures  # what `callback` receives every `every` seconds

    def __init__(
        self,
        *,
        report: Optional[PathLike] = None,
        trace: Optional[PathLike] = None,
        json: Optional[PathLike] = None,
        cuda: Optional[bool] = None,
        measure_pack: bool = True,
        probe_steps: bool = True,
        every: Optional[float] = None,
        callback: Optional[Callable[[LiveFigures], Any]] = None,
        tensorboard: Any = None,
        stall: Optional[float] = None,
    ) -> None:
        self._outputs = {
            "report": None if report is None else os.fspath(report),
            "trace": None if trace is None else os.fspath(trace),
            "json": None if json is None else os.fspath(json),
        }
        for name, value in (("every", every), ("stall", stall)):
            if value is not None and not value >= 0:
                raise _native.UsageError(f"gpufeed.profile: {name}={value!r}: use seconds (a "
                                         "number >= 0) or None")
        self._cuda = cuda
        self._measure_pack = measure_pack
        self._probe_steps = probe_steps
        self._live = (every or None, callback, tensorboard)
        self._stall = stall
        self._native: Optional[_native.Profile] = None
        self._report: Optional[_native.ProfileReport] = None
        self._loaders: dict[int, list] = {}  # id -> [loader, baseline, epochs]
        self._step_name = _native.range_name("step")
        self._sync_name = _native.range_name("sync")
        self._collective_name = _native.range_name("collective")
        self._wait_name = _native.range_name("wait")
        self._rank, self._world_size = -1, 0
        self.clock = Clock()
        self.steps = Steps()
        self.waits = Waits()
        self.habits = Habits()
        self.probes = Probes()
        self._dataloaders = DataLoaders()  # the DataLoaders timed, each with its counters
        self._notes: list = []  # what the profile could not do, said once
        self._watchdog: Optional[Watchdog] = None
        self._run: Optional[RunRecord] = None
        self._finished_facts: Optional[dict] = None
        self._explained: list = []  # the exceptions whose notes were added

    def __enter__(self) -> "profile":
        for what, path in self._outputs.items():
            if path is not None:
                _native.check_writable(what, path)
        cuda = self._cuda if self._cuda is not None else _native.cuda_device_count() > 0
        if cuda:
            add_cupti_directories()
        with _profile_state.lock:
            if _profile_state.active is not None:
                raise _native.UsageError("a gpufeed.profile is already running in this process")
            self._native = _native.Profile(cuda)
            self.clock.entered_ns = _native.now_ns()
            self.clock.entered_cpu_ns = time.process_time_ns()
            self.clock.entered_machine_ns = machine_busy_ns()
            _profile_state.active = self
        self._run = RunRecord(self._totals, self.clock.entered_ns, *self._live)
        self._watchdog = Watchdog(self, self._stall)
        self._dataloaders.stall_threshold = self._watchdog.threshold_s
        try:
            self._patch_torch()
            self._watchdog.start()
        except BaseException:
            finish(self, None, started=False)  # undone: the process as it was
            raise
        return self

    def _patch_torch(self) -> None:
        """torch's internals patched, as far as the torch running has what they need (a torch
        imported later is not patched: the loop's input is then timed by prof.input())."""
        torch = torch_patches.torch_module()
        if torch is None:
            return
        support = torch_patches.check(torch)
        for note in support.notes:
            self._note(note)
        torch_patches.time_dataloaders(support, self._dataloaders.worker_init,
                                       self._dataloaders.started)
        if support.fetchers:
            torch_patches.time_fetchers(self._dataloaders.main_fetches)
        if support.tensors:
            watch_habits(torch)

    def _note(self, note: str) -> None:
        """Something the profile could not do: said once, on stderr and in its results."""
        if note not in self._notes:
            self._notes.append(note)
            print(f"gpufeed.profile: {note}", file=sys.stderr)

    def _internal_error(self, doing: str, error: BaseException) -> None:
        self._note(f"{doing} failed ({type(error).__name__}: {error}); the loop goes on")

    def input(self, iterable: Any) -> Any:
        """``for batch in prof.input(iterable):`` times each ``next()`` of any iterable as a
        wait for input (DataLoaders are timed without it; a gpufeed.Loader times itself and is
        returned as it is)."""
        if isinstance(iterable, _profile_state.InputSource):
            return iterable
        return ProfiledInput(iterable)

    def step(self) -> _Range:
        """``with prof.step():`` around one training step (forward, backward, update)."""
        if self._native is None:
            raise _native.UsageError("prof.step() outside its `with gpufeed.profile()` block")
        index = self.steps.marked
        self.steps.marked += 1
        return _StepRange(self, self._native, self._step_name, index)

    def sync(self) -> _Range:
        """``with prof.sync():`` around a host synchronization of your own (CUPTI finds the
        CUDA ones by itself)."""
        if self._native is None:
            raise _native.UsageError("prof.sync() outside its `with gpufeed.profile()` block")
        return _Range(self._native, self._sync_name, self.steps.marked)
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
            self._loaders[id(source)] = [source, source.profile_snapshot(), 1]
        else:
            entry[2] += 1

    def _busiest_loader(self):
        best = None
        best_samples = -1
        for loader, baseline, epochs in self._loaders.values():
            if loader.closed:
                continue
            samples = loader.stats().samples
            if samples > best_samples:
                best, best_samples = (loader, baseline, epochs), samples
        return best


    def __exit__(self, exc_type: Any, exc: Optional[BaseException], traceback: Any) -> None:
        finish(self, exc)  # the loop's exception, if any, goes on as it was (with notes)

    def _finished(self) -> _native.ProfileReport:
        if self._report is None:
            raise _native.UsageError("the profile has not finished: use it after its `with` block")
        return self._report

    def _run_facts(self) -> dict:
        if self._finished_facts is None:
            raise _native.UsageError("the profile has not finished: use it after its `with` block")
        return self._finished_facts

    def summary(self) -> str:
        """The text pipebench prints: utilization, idle time by cause, verdict, bottleneck
        stage, recommendations, practice checks; then the run's trends, its stalls, its dead
        workers and what the profile could not watch."""
        text = self._finished().summary()
        if self.waits.batches:
            # The loop's input was timed even though no gpufeed.Loader fed it.
            text = text.replace(
                "note: no gpufeed.Loader ran inside the profile; input stages unknown\n",
                outputs.input_line(self))
        return text + outputs.run_lines(self._run_facts())

    def results(self) -> ProfileResults:
        """The diagnosis as data, a gpufeed.ProfileResults (``.to_dict()``: the JSON ``json=``
        writes): pipebench's --json keys (samples_per_s, device_util, idle_by_cause,
        bottleneck_stage, verdict, stages, echo, practices, profile, ...), and ``inputs``: the
        DataLoaders the loop read, each with its settings and its own counters (batches,
        samples, fetches, starts), its ``role`` ("training" or "evaluation", by the modules its
        batches went through) and whether it is the one ``diagnosed``: the one that fed the
        training steps, whose samples are ``samples``; ``run``: the whole run's windows and
        epochs and their ``trends``; ``stalls``, ``worker_deaths`` and ``notes`` (what the
        profile could not watch)."""
        return ProfileResults.from_dict(outputs.results(self, self._finished()))
