"""How a profile times its loop: each request for input is a wait (a DataLoader's, a
prof.input() iterable's, a gpufeed.Loader's), the time from a batch to the next request is an
implicit step, each batch moves the run's figures (windows, epochs, live lines) and an exception
the input raises goes on to the loop with what the profile knows added. A mixin of
gpufeed.profile: the state it works on is the profile's (state.py)."""

from __future__ import annotations

import time
from typing import Any, Optional

from .. import _native
from . import probe
from .dataloader import batch_shape
from .reports import death_notes, explain_failure
from .run import Totals
from .state import LOADER_KEY


class InputTiming:
    """The loop's inputs and steps, timed (gpufeed.profile's half that runs on every batch)."""

    def _timed_next(self, fetch: Any, source: Any) -> Any:
        """One batch from a timed input, `fetch(source)` for a DataLoader iterator `source`
        (`fetch()` for any other): the wait for it is a "wait" range; without prof.step() the
        time since the previous batch, less this wait, is a step. Now and then the next batch is
        taken too and held for the next call (probe.py); the batch before the last is released
        here, inside the wait. An exception the input raises reaches the loop as it was, with
        what the profile knows of it added."""
        if self._native is None:
            return fetch() if source is None else fetch(source)
        key = None if source is None else self._dataloaders.key_of(source)
        begin = self._wait_begins(key)
        cpu = time.process_time_ns()
        try:
            item, warm = self._fetch(fetch, source)
        except StopIteration:
            self._run.epoch_end(key, self._wait_ends(key, begin, cpu))
            self.waits.since = None
            self.waits.exhausted = True
            raise
        except BaseException as error:
            self._wait_ends(key, begin, cpu)
            self.waits.since = None
            self._explain(error, source)
            raise
        end = self._wait_ends(key, begin, cpu)
        self._delivered(key, source, item, warm, end)
        return item

    def _wait_begins(self, key: Optional[int]) -> int:
        """A request for input: the step before ends (its habits are the loop's), the batch
        before it is released, and the wait is under way (the watchdog sees it)."""
        begin = _native.now_ns()
        if self.steps.begin is not None:
            self._close_step(begin)
        self.habits.commit()
        self.waits.previous_batch = None
        self.waits.since = begin
        self.waits.input_key = key
        self._run.epoch_start(key, begin)
        return begin

    def _fetch(self, fetch: Any, source: Any) -> tuple:
        """(the batch, whether a probe held it) from the input."""
        if source is None:
            return fetch(), False
        took, item, warm = probe.take_held(source)
        if not took:
            quiet = self._probe_steps and probe.before_fetch(source)
            item = fetch(source)
            if self._probe_steps:
                probe.after_fetch(source, fetch, self.waits.batches, quiet)
        return item, warm

    def _wait_ends(self, key: Optional[int], begin: int, cpu: int) -> int:
        end = _native.now_ns()
        waits = self.waits
        waits.wait_cpu_ns += time.process_time_ns() - cpu
        self._native.record(self._wait_name, begin, end, waits.batches)
        waits.wait_ns += end - begin
        if key is not None:
            self._dataloaders.counters[key].wait_ns += end - begin
        return end

    def _delivered(self, key: Optional[int], source: Any, item: Any, warm: bool,
                   end: int) -> None:
        waits, steps = self.waits, self.steps
        waits.since = None
        waits.exhausted = False
        waits.batches += 1
        if warm:
            self.probes.warm_batch = waits.batches
        shape = batch_shape(item)
        if shape:
            waits.samples += shape[0]
        if key is not None and not self._dataloaders.cuda_batches:
            waits.previous_batch = waits.last_batch
        waits.last_batch, waits.last_storages = item, None
        steps.begin = end
        steps.marked_at_batch = steps.marked
        if key is not None:
            self._dataloaders.delivered(key, source, item, shape, end)
        if end >= self._run.due:
            self._run.tick(end)

    def _explain(self, error: BaseException, source: Any) -> None:
        """Adds what the profile knows of the input's failure to `error` (a dead worker)."""
        if any(e is error for e in self._explained):
            return
        try:
            pool = self._dataloaders.pool_of(source) if source is not None else None
            if pool is not None:
                pool.sample_memory()
                self._watchdog.deaths += [(d, pool) for d in pool.check_deaths()]
            notes = self._death_notes()
        except Exception as failure:  # noqa: BLE001 - the profile's own: never the loop's
            notes = [f"gpufeed.profile: could not explain it ({type(failure).__name__}: "
                     f"{failure})"]
        if notes:
            self._explained.append(error)
            explain_failure(error, notes)

    def _death_notes(self) -> list:
        notes = []
        for death, pool in self._watchdog.deaths:
            notes += death_notes(death, pool, self._dataloaders.facts.get(pool.key))
        return notes

    def _warm_step(self, ns: int) -> None:
        """The step on a probe's batch took `ns`: a step of the DataLoader that delivered it."""
        self.probes.add(self.waits.input_key, ns)

    def _batch_used(self, training: bool) -> None:
        """A module ran, in training mode or not, inside the step of the last timed batch."""
        counters = self._dataloaders.counters.get(self.waits.input_key)
        if counters is not None:
            counters.used(self.waits.batches, training)

    def _loader_next(self, fetch: Any) -> Any:
        """A gpufeed Loader's next batch, `fetch()`: the loader records its wait itself; without
        prof.step() the time since its previous batch, less this wait, is a step."""
        begin = _native.now_ns()
        if self.steps.begin is not None:
            self._close_step(begin)
        self.habits.commit()
        self.waits.since, self.waits.input_key = begin, LOADER_KEY
        try:
            item = fetch()
        except StopIteration:
            self.waits.exhausted = True
            raise
        finally:
            self.waits.since = None
        self.waits.exhausted = False
        end = _native.now_ns()
        self.steps.begin = end
        self.steps.marked_at_batch = self.steps.marked
        self.waits.last_batch, self.waits.last_storages = item, None
        if end >= self._run.due:
            self._run.tick(end)
        return item

    def _input_stage(self, name: str, begin: int, end: int) -> None:
        """Work of the input that runs on the consumer's thread after its batch arrived (a
        Loader's transform ops on the batch): a range of its own, and a wait for input, since
        the loop waits for it as for any other stage."""
        native = self._native
        if native is None:
            return
        native.record(_native.range_name(name), begin, end, self.waits.batches)
        native.record(self._wait_name, begin, end, self.waits.batches)
        self.waits.wait_ns += end - begin

    def _close_step(self, end: int) -> None:
        """Records the work between the last timed batch and `end` as a step, unless the loop
        marked its steps itself."""
        steps = self.steps
        begin, steps.begin = steps.begin, None
        if begin is None or steps.marked != steps.marked_at_batch or self._native is None:
            return
        if self.probes.warm_batch == self.waits.batches:
            self._warm_step(end - begin)
        self._native.record(self._step_name, begin, end, steps.implicit)
        steps.implicit += 1
        steps.busy_ns += end - begin

    def _totals(self, now: int, key: Optional[int]) -> Totals:
        """The run's running totals at `now`: of DataLoader `key`'s waits and samples, or of
        every input's (None), with the costs of the input stages of `key` (or of the input
        that delivered the most batches)."""
        waits, steps = self.waits, self.steps
        dataloaders = self._dataloaders
        if key is None:
            totals = Totals(now, steps.count, steps.busy_ns, waits.batches, waits.samples,
                            waits.wait_ns)
            key = max(dataloaders.facts, key=lambda k: dataloaders.facts[k]["batches"],
                      default=None)
        else:
            counters = dataloaders.counters[key]
            totals = Totals(now, steps.count, steps.busy_ns, dataloaders.facts[key]["batches"],
                            counters.samples, counters.wait_ns)
        if key is not None:
            totals.stage_ns, totals.stage_samples = dataloaders.stage_totals(key)
        elif self._loaders:
            totals.stage_ns, totals.stage_samples = _loader_stages(self._busiest_loader())
        return totals


def _loader_stages(busiest: Any) -> tuple:
    """The stage costs of a gpufeed.Loader so far: ({stage: busy ns}, samples)."""
    if busiest is None:
        return {}, 0
    stats = busiest[0].stats()
    stages = {name: int(stage.busy_s * 1e9)
              for name, stage in stats.stages.items() if name not in ("wait", "step")}
    return stages, stats.samples
