"""The profile object: records a training loop, times its inputs and diagnoses it."""

from __future__ import annotations

import json as _json
import os
import sys
import time
from typing import Any, Optional, Union

from .. import _native, _profile_state

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
        super().__exit__(*exc)
        self._prof._marked_depth -= 1


_MISSING = object()
_habit_patches: list = []  # (owner, attribute, original or _MISSING) while a profile watches
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


def _watch_habits() -> None:
    """While a profile runs: counts the loop's host reads of tensors (.item(), .cpu(),
    .numpy(), .tolist()) inside its steps with where they are, notes a DataParallel forward
    and counts torch.cuda.empty_cache() calls inside the steps; reads and calls only from the
    user's code (_user_frame). Restored by _unwatch_habits()."""
    torch = sys.modules.get("torch")
    if torch is None or _habit_patches:
        return
    _find_code_owners(torch)

    def patch(owner: Any, name: str, make: Any) -> None:
        original = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(
            owner, name)
        setattr(owner, name, make(getattr(owner, name)))
        _habit_patches.append((owner, name, original))

    def host_read(name: str) -> Any:
        def make(original: Any) -> Any:
            def counted(tensor: Any, *args: Any, **kwargs: Any) -> Any:
                current = _profile_state.active
                if current is not None and current._in_step():
                    frame = _user_frame()
                    if frame is not None:
                        key = (frame.f_code.co_filename, frame.f_lineno, name)
                        current._host_reads[key] = current._host_reads.get(key, 0) + 1
                return original(tensor, *args, **kwargs)

            return counted

        return make

    for name in _HOST_READS:
        patch(torch.Tensor, name, host_read(name))

    def data_parallel(original: Any) -> Any:
        def forward(module: Any, *args: Any, **kwargs: Any) -> Any:
            current = _profile_state.active
            if current is not None:
                current._data_parallel = True
            return original(module, *args, **kwargs)

        return forward

    def empty_cache(original: Any) -> Any:
        def counted() -> None:
            current = _profile_state.active
            if current is not None and current._in_step() and _user_frame() is not None:
                current._empty_cache_calls += 1
            return original()

        return counted

    patch(torch.nn.DataParallel, "forward", data_parallel)
    patch(torch.cuda, "empty_cache", empty_cache)

    def moved(name: str) -> Any:
        def make(original: Any) -> Any:
            def counted(tensor: Any, *args: Any, **kwargs: Any) -> Any:
                result = original(tensor, *args, **kwargs)
                current = _profile_state.active
                if (current is not None and current._in_step() and result is not tensor
                        and tensor.device.type == "cpu" and result.device.type != "cpu"
                        and not current._in_last_batch(tensor)):
                    frame = _user_frame()
                    if frame is not None:
                        key = (frame.f_code.co_filename, frame.f_lineno, name)
                        current._host_moves[key] = current._host_moves.get(key, 0) + 1
                return result

            return counted

        return make

    for name in ("to", "cuda"):
        patch(torch.Tensor, name, moved(name))

    def forward_seen(module: Any, inputs: Any) -> None:
        current = _profile_state.active
        if current is not None and current._in_step():
            current._forward_seen(torch, module, inputs)

    global _forward_hook
    _forward_hook = torch.nn.modules.module.register_module_forward_pre_hook(forward_seen)


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


def _unwatch_habits() -> None:
    global _forward_hook
    if _forward_hook is not None:
        _forward_hook.remove()
        _forward_hook = None
    while _habit_patches:
        owner, name, original = _habit_patches.pop()
        if original is _MISSING:
            delattr(owner, name)  # the class inherits it again
        else:
            setattr(owner, name, original)


class _ProfiledInput:
    """``prof.input(iterable)``: iterates `iterable`, each ``next()`` timed as a wait for input
    on the profile running at the time."""

    def __init__(self, iterable: Any) -> None:
        self._iterable = iterable

    def __iter__(self) -> "_TimedIterator":
        return _TimedIterator(iter(self._iterable))

    def __len__(self) -> int:
        return len(self._iterable)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._iterable, name)


class _TimedIterator:
    __slots__ = ("_next",)

    def __init__(self, iterator: Any) -> None:
        self._next = iterator.__next__

    def __iter__(self) -> "_TimedIterator":
        return self

    def __next__(self) -> Any:
        current = _profile_state.active
        if current is None:
            return self._next()
        return current._timed_next(self._next, None)  # not a DataLoader: no facts


class _FetchCounters:
    """What making batches cost a DataLoader's fetcher in one process: batches, samples, the
    time in the dataset's items plus collate, and collate alone."""

    def __init__(self) -> None:
        self.batches = 0
        self.samples = 0
        self.fetch_ns = 0
        self.collate_ns = 0

    def add(self, samples: int, fetch_ns: int, collate_ns: int) -> None:
        self.batches += 1
        self.samples += samples
        self.fetch_ns += fetch_ns
        self.collate_ns += collate_ns

    def as_dict(self) -> dict:
        return {"batches": self.batches, "samples": self.samples, "fetch_ns": self.fetch_ns,
                "collate_ns": self.collate_ns}


class _FileCounters(_FetchCounters):
    """A worker process's counters, written to `path` at most every 0.1 s and when the worker
    exits, for the profile to read when it ends."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self._path = path
        self._written = 0
        from multiprocessing import util

        # A worker ends through multiprocessing's exit, which runs its finalizers.
        util.Finalize(self, self.write, exitpriority=10)

    def add(self, samples: int, fetch_ns: int, collate_ns: int) -> None:
        super().add(samples, fetch_ns, collate_ns)
        if _native.now_ns() - self._written >= 100_000_000:
            self.write()

    def write(self) -> None:
        self._written = _native.now_ns()
        temporary = f"{self._path}.tmp"
        try:
            with open(temporary, "w") as f:
                _json.dump(self.as_dict(), f)
            os.replace(temporary, self._path)
        except OSError:
            pass  # the profile ended and took its directory: nobody reads this any more


class _InputCounters:
    """What one DataLoader did during a profile (an iterator made before it counts as one),
    kept apart from the others': a training loader's counters are never its validation
    loader's. Its fetches are its own process's, plus its workers' from `workers_dir`."""

    def __init__(self, source: Any) -> None:
        self.source = source  # held until the profile ends: its id stays its own
        self.fetches = _FetchCounters()
        self.workers_dir: Optional[str] = None
        self.starts = 0  # iterators started: worker pools, when it has workers
        self.startup_ns = 0  # from each start to its first batch
        self.samples = 0  # its batches' samples (the first dimension of each batch's images)
        self.training_batches = 0  # batches a module in training mode was run on
        self.evaluation_batches = 0  # batches a module in eval mode was run on
        self._last_training = self._last_evaluation = -1

    def used(self, batch: int, training: bool) -> None:
        """A module in training mode (or in eval mode) ran on batch number `batch`: counted
        once a batch."""
        if training and self._last_training != batch:
            self._last_training = batch
            self.training_batches += 1
        elif not training and self._last_evaluation != batch:
            self._last_evaluation = batch
            self.evaluation_batches += 1

    def role(self) -> Optional[str]:
        """"training" when a module in training mode ran on its batches, "evaluation" when
        only modules in eval mode did, None when none ran inside the steps."""
        if self.training_batches:
            return "training"
        return "evaluation" if self.evaluation_batches else None


_fetch_counters: Optional[_FetchCounters] = None  # where this process's fetch times go
_fetch_routes: Any = None  # fetcher -> its DataLoader's counters (weak keys), while profiled
_original_fetch: dict = {}  # fetcher class -> its own fetch while timed


class _TimedCollate:
    """A fetcher's collate_fn, timed: it keeps the time of its last call."""

    __slots__ = ("collate", "last_ns")

    def __init__(self, collate: Any) -> None:
        self.collate = collate
        self.last_ns = 0

    def __call__(self, data: Any) -> Any:
        begin = time.perf_counter_ns()
        try:
            return self.collate(data)
        finally:
            self.last_ns = time.perf_counter_ns() - begin


def _timed_fetch(original: Any) -> Any:
    def fetch(fetcher: Any, index: Any) -> Any:
        counters = _fetch_counters
        if counters is None:
            return original(fetcher, index)
        if _fetch_routes is not None:
            counters = _fetch_routes.get(fetcher, counters)
        collate = fetcher.collate_fn
        if not isinstance(collate, _TimedCollate):
            collate = fetcher.collate_fn = _TimedCollate(collate)  # once per fetcher
        collate.last_ns = 0
        begin = time.perf_counter_ns()
        batch = original(fetcher, index)
        elapsed = time.perf_counter_ns() - begin
        counters.add(len(index) if fetcher.auto_collation else 1, elapsed, collate.last_ns)
        return batch

    return fetch


def _route_fetches(iterator: Any, counters: _InputCounters) -> None:
    """This process's fetches for a DataLoader iterator (num_workers=0) go to its loader's
    counters."""
    fetcher = getattr(iterator, "_dataset_fetcher", None)
    if fetcher is not None and _fetch_routes is not None:
        _fetch_routes[fetcher] = counters.fetches


def _time_fetchers(counters: Optional[_FetchCounters]) -> None:
    """Times DataLoader fetchers (the dataset's items and collate) in this process into
    `counters`; None stops it."""
    global _fetch_counters, _fetch_routes
    import weakref

    from torch.utils.data._utils import fetch as fetchers

    _fetch_counters = counters
    _fetch_routes = None if counters is None else weakref.WeakKeyDictionary()
    for cls in (fetchers._MapDatasetFetcher, fetchers._IterableDatasetFetcher):
        if counters is not None and cls not in _original_fetch:
            _original_fetch[cls] = cls.fetch
            cls.fetch = _timed_fetch(cls.fetch)
        elif counters is None and cls in _original_fetch:
            cls.fetch = _original_fetch.pop(cls)


class _WorkerTiming:
    """A DataLoader's worker_init_fn while a profile runs: times the worker's fetches into a
    file of `directory`, then runs the loader's own worker_init_fn. Picklable, so spawned
    workers get it too."""

    def __init__(self, directory: str, init: Any) -> None:
        self.directory = directory
        self.init = init

    def __call__(self, worker_id: int) -> None:
        _time_fetchers(_FileCounters(os.path.join(self.directory, f"worker-{os.getpid()}.json")))
        if self.init is not None:
            self.init(worker_id)


_dataloader_patches: dict = {}  # (class, attribute) -> the original while a profile times them


def _time_dataloaders(prof: "profile") -> None:
    """While a profile runs: every torch DataLoader iterator's ``__next__`` is timed as a wait
    for input, the main process's fetches and every worker's are timed, and each iterator's
    start is noted (the loop itself is not changed)."""
    if "torch" not in sys.modules or _dataloader_patches:
        return
    try:
        from torch.utils.data import dataloader
    except ImportError:
        return
    iterator_cls = dataloader._BaseDataLoaderIter
    next_original = iterator_cls.__next__
    get_iterator = dataloader.DataLoader._get_iterator

    def timed_next(iterator: Any) -> Any:
        current = _profile_state.active
        if current is None:
            return next_original(iterator)
        return current._timed_next(next_original, iterator)

    def started_iterator(loader: Any) -> Any:
        current = _profile_state.active
        if current is None or loader.num_workers == 0:
            iterator = get_iterator(loader)
        else:
            init = loader.worker_init_fn
            loader.worker_init_fn = _WorkerTiming(current._worker_dir(loader), init)
            try:
                iterator = get_iterator(loader)
            finally:
                loader.worker_init_fn = init
        if current is not None:
            current._iterator_started(iterator, loader)
        return iterator

    _dataloader_patches[(iterator_cls, "__next__")] = next_original
    _dataloader_patches[(dataloader.DataLoader, "_get_iterator")] = get_iterator
    iterator_cls.__next__ = timed_next
    dataloader.DataLoader._get_iterator = started_iterator
    _time_fetchers(prof._main_fetches)


def _untime_dataloaders() -> None:
    if not _dataloader_patches:
        return
    for (cls, name), original in _dataloader_patches.items():
        setattr(cls, name, original)
    _dataloader_patches.clear()
    _time_fetchers(None)


def _dataloader_facts(loader: Any) -> dict:
    """A DataLoader's settings, read from its public attributes (or, for an iterator made
    before the profile started, from the iterator's own copies of them)."""
    if not hasattr(loader, "num_workers"):  # an iterator: its loader is not kept
        loader = _IteratorView(loader)
    dataset = loader.dataset
    try:
        length = len(dataset)
    except TypeError:
        length = None
    context = loader.multiprocessing_context
    if context is None and loader.num_workers > 0:
        import multiprocessing

        context = multiprocessing.get_start_method()
    elif context is not None and not isinstance(context, str):
        context = context.get_start_method()
    collate = getattr(loader, "collate_fn", None)
    return {
        "kind": "torch.utils.data.DataLoader",
        "num_workers": loader.num_workers,
        "batch_size": loader.batch_size,
        "pin_memory": loader.pin_memory,
        "prefetch_factor": loader.prefetch_factor if loader.num_workers > 0 else None,
        "persistent_workers": loader.persistent_workers,
        "multiprocessing_context": context,
        "dataset": type(dataset).__name__,
        "dataset_length": length,
        "sampler": type(getattr(loader, "sampler", None)).__name__,
        "collate_fn": getattr(collate, "__name__", type(collate).__name__),
        "batches": 0,
    }


class _IteratorView:
    """A DataLoader iterator seen as its loader: the settings it copied at its start."""

    def __init__(self, iterator: Any) -> None:
        self.dataset = getattr(iterator, "_dataset", None)
        self.num_workers = getattr(iterator, "_num_workers", 0)
        self.batch_size = getattr(getattr(iterator, "_index_sampler", None), "batch_size", None)
        self.pin_memory = getattr(iterator, "_pin_memory", None)
        self.prefetch_factor = getattr(iterator, "_prefetch_factor", None)
        self.persistent_workers = getattr(iterator, "_persistent_workers", None)
        self.multiprocessing_context = getattr(iterator, "_multiprocessing_context", None)
        self.collate_fn = getattr(iterator, "_collate_fn", None)


def _batch_shape(batch: Any) -> Optional[list]:
    """The shape of a batch's images: the tensor itself, or the first of a tuple/list."""
    if isinstance(batch, (tuple, list)) and batch:
        batch = batch[0]
    shape = getattr(batch, "shape", None)
    return None if shape is None else [int(d) for d in shape]


def _inference_mode(torch: Any) -> bool:
    is_inference = getattr(torch, "is_inference_mode_enabled", None)
    return bool(is_inference()) if is_inference is not None else False


def _on_cuda(batch: Any) -> bool:
    """Whether a batch (a tensor, or a tuple/list/dict of them) holds a CUDA tensor."""
    if isinstance(batch, (tuple, list)):
        return any(_on_cuda(b) for b in batch)
    if isinstance(batch, dict):
        return any(_on_cuda(b) for b in batch.values())
    return bool(getattr(batch, "is_cuda", False))


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
    the advice says what that rate predicts (``measure_pack=False`` skips it).
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
    ) -> None:
        self._outputs = {
            "report": None if report is None else os.fspath(report),
            "trace": None if trace is None else os.fspath(trace),
            "json": None if json is None else os.fspath(json),
        }
        self._cuda = cuda
        self._measure_pack = measure_pack
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
        # id(DataLoader) (or of an iterator made before the profile) -> its facts, its
        # counters, its dataset (until exit); id(iterator) -> its DataLoader's id.
        self._inputs: dict[int, dict] = {}
        self._input_counters: dict[int, _InputCounters] = {}
        self._datasets: dict[int, Any] = {}
        self._input_of: dict[int, int] = {}
        self._last_input: Optional[int] = None  # the DataLoader of the last timed batch
        self._wait_ns = 0  # the timed inputs' waits, summed
        self._entered_ns = 0
        self._entered_cpu_ns = 0
        self._exited_ns = 0
        self._main_fetches = _FetchCounters()  # this process's fetches for no DataLoader seen
        self._starting: dict[int, int] = {}  # id(iterator) -> when it started, until a batch
        self._cuda_batches = False  # a DataLoader batch held CUDA tensors
        self._marked_depth = 0  # inside `with prof.step()`
        self._host_reads: dict = {}  # (file, line, method) -> calls inside steps
        self._data_parallel = False
        self._empty_cache_calls = 0
        self._host_moves: dict = {}  # (file, line, method) -> host tensors moved inside steps
        # The last batch (moving its tensors is expected) and their storages, found only when
        # a host tensor is moved.
        self._last_batch: Any = None
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
        _time_dataloaders(self)
        _watch_habits()
        return self

    def _in_step(self) -> bool:
        """Inside a marked step, or inside an implicit one (a batch arrived, no step marked)."""
        return self._marked_depth > 0 or (
            self._step_begin is not None and self._steps == self._steps_at_batch
        )

    def _counters_of(self, source: Any) -> _InputCounters:
        """The counters of a DataLoader, or of an iterator made before the profile (its loader
        is not known), with its facts: made the first time the profile sees it."""
        key = id(source)
        counters = self._input_counters.get(key)
        if counters is None:
            counters = self._input_counters[key] = _InputCounters(source)
            self._inputs[key] = _dataloader_facts(source)
            is_loader = hasattr(source, "num_workers")
            self._datasets[key] = getattr(source, "dataset" if is_loader else "_dataset", None)
        return counters

    def _worker_dir(self, loader: Any) -> str:
        """Where `loader`'s worker processes write their counters: a directory of its own."""
        counters = self._counters_of(loader)
        if counters.workers_dir is None:
            import tempfile

            counters.workers_dir = tempfile.mkdtemp(prefix="gpufeed-profile-")
        return counters.workers_dir

    def _iterator_started(self, iterator: Any, loader: Any) -> None:
        self._starting[id(iterator)] = _native.now_ns()
        counters = self._counters_of(loader)
        counters.starts += 1
        self._input_of[id(iterator)] = id(loader)
        _route_fetches(iterator, counters)

    def _input_key(self, iterator: Any) -> int:
        """The id of the DataLoader `iterator` belongs to (its own, if made before the
        profile)."""
        key = self._input_of.get(id(iterator))
        if key is None:
            _route_fetches(iterator, self._counters_of(iterator))
            key = self._input_of[id(iterator)] = id(iterator)
        return key

    @staticmethod
    def _worker_fetches(counters: _InputCounters) -> None:
        """Adds the counters of a DataLoader's worker processes (each wrote its own file) to
        its fetches."""
        directory, counters.workers_dir = counters.workers_dir, None
        if directory is None:
            return
        import shutil

        total = counters.fetches
        for name in os.listdir(directory):
            if name.endswith(".json"):
                try:
                    with open(os.path.join(directory, name)) as f:
                        one = _json.load(f)
                except (OSError, ValueError):
                    continue  # a worker killed while writing: its last file is gone
                total.batches += one["batches"]
                total.samples += one["samples"]
                total.fetch_ns += one["fetch_ns"]
                total.collate_ns += one["collate_ns"]
        shutil.rmtree(directory, ignore_errors=True)

    def _fed_input(self) -> Optional[int]:
        """The DataLoader that fed the training steps: the one whose batches most went through
        a module in training mode; without modules in the steps, the one that delivered the
        most batches. A validation loader beside it is never it."""
        if not self._inputs:
            return None
        return max(self._inputs, key=lambda key: (self._input_counters[key].training_batches,
                                                  self._inputs[key]["batches"]))

    def _settle_inputs(self) -> None:
        """At the end: each DataLoader's own counters into its facts."""
        fed = self._fed_input()
        for key, facts in self._inputs.items():
            counters = self._input_counters[key]
            self._worker_fetches(counters)
            facts["fetch"] = counters.fetches.as_dict()
            facts["samples"] = counters.samples
            facts["starts"] = counters.starts
            facts["startup_ns"] = counters.startup_ns
            facts["role"] = counters.role()
            facts["diagnosed"] = key == fed
            counters.source = None

    def _input_pool(self) -> Optional[_native.InputPoolFacts]:
        """The pool of the DataLoader that fed the training steps, with what its fetches
        cost."""
        key = self._fed_input()
        if key is None:
            return None
        facts, counters = self._inputs[key], self._input_counters[key]
        fetches = counters.fetches
        pool = _native.InputPoolFacts()
        pool.workers = facts["num_workers"] or 0
        pool.batches = fetches.batches
        pool.samples = fetches.samples
        pool.fetch_ns = fetches.fetch_ns
        pool.collate_ns = fetches.collate_ns
        pool.startup_ns = counters.startup_ns
        pool.starts = counters.starts
        pool.persistent_workers = bool(facts["persistent_workers"])
        pool.pin_memory = bool(facts["pin_memory"])
        pool.prefetch_factor = facts["prefetch_factor"] or 0
        pool.cuda = bool(self._cuda_batches)
        pool.cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
        pool.step_cores = facts["step_cores"] = self._step_cores(
            fetches.fetch_ns if not facts["num_workers"] else 0)
        facts["fetch"] = fetches.as_dict()
        dataset = self._datasets.get(key)
        if self._measure_pack and self._dataset_is_the_cost(fetches, dataset):
            from .._pack import measure_rate

            shape = facts.get("batch_shape") or []
            size = tuple(shape[-2:]) if len(shape) == 4 else None
            try:
                rate, items, store, note = measure_rate(dataset, facts["batch_size"] or 1, size)
            except Exception as error:  # noqa: BLE001 - a remedy not measured never fails the loop
                rate, items, store = 0.0, 0, "raw"
                note = f"gpufeed could not read a packed sample of it ({type(error).__name__}: " \
                       f"{error})"
            pool.packed_samples_per_s, pool.packed_items = rate, items
            pool.packed_store, pool.pack_note = store, note
            facts["packed_sample"] = {"samples_per_s": rate, "items": items, "store": store,
                                      "note": note or None}
        if dataset is not None:
            from .._pack import transform_advice

            # The advice keeps the dataset's transform: the model sees the same inputs.
            pool.pack_loader_keywords, pool.pack_transform_note = transform_advice(dataset)
            facts["transform"] = pool.pack_transform_note or None
        return pool

    def _step_cores(self, loading_ns: int) -> float:
        """Cores the loop's steps kept busy: the process's CPU time outside its waits (less the
        loading it did itself, `loading_ns`, on one core) over the steps' wall time."""
        wall = _native.now_ns() - self._entered_ns - self._wait_ns
        cpu = time.process_time_ns() - self._entered_cpu_ns - loading_ns
        return max(0.0, cpu / wall) if wall > 0 else 0.0

    def _dataset_is_the_cost(self, fetches: _FetchCounters, dataset: Any) -> bool:
        """The loop waited for input (TF's "moderately input-bound" or worse) and the dataset's
        items, not collate, took the workers' time: worth measuring what packing it would give.
        Only map-style datasets (len() and [i]) can be packed."""
        elapsed = _native.now_ns() - self._entered_ns
        return (
            dataset is not None and hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")
            and elapsed > 0 and self._wait_ns / elapsed >= 0.05 and fetches.samples > 0
            and fetches.fetch_ns - fetches.collate_ns >= fetches.collate_ns
        )

    def input(self, iterable: Any) -> Any:
        """``for batch in prof.input(iterable):`` times each ``next()`` of any iterable as a
        wait for input (DataLoaders are timed without it; a gpufeed.Loader times itself and is
        returned as it is)."""
        if hasattr(iterable, "__gpufeed_counters__"):
            return iterable
        return _ProfiledInput(iterable)

    def _timed_next(self, fetch: Any, source: Any) -> Any:
        """One batch from a timed input, `fetch(source)` for a DataLoader iterator `source`
        (`fetch()` for any other): the wait for it is a "wait" range; without prof.step() the
        time since the previous batch, less this wait, is a step."""
        native = self._native
        if native is None:
            return fetch() if source is None else fetch(source)
        key = None if source is None else self._input_key(source)
        begin = _native.now_ns()
        if self._step_begin is not None:
            self._close_step(begin)
        try:
            item = fetch() if source is None else fetch(source)
        except StopIteration:
            native.record(self._wait_name, begin, _native.now_ns(), self._batches)
            raise
        end = _native.now_ns()
        native.record(self._wait_name, begin, end, self._batches)
        self._wait_ns += end - begin
        self._batches += 1
        shape = _batch_shape(item)
        if shape:
            self._timed_samples += shape[0]
        self._last_batch, self._last_storages = item, None
        self._step_begin = end
        self._steps_at_batch = self._steps
        self._last_input = key
        if key is not None:
            facts, counters = self._inputs[key], self._input_counters[key]
            facts["batches"] += 1
            if facts["batches"] == 1:
                facts["batch_shape"] = shape
            if shape:
                counters.samples += shape[0]
            if self._starting:
                started = self._starting.pop(id(source), None)
                if started is not None:
                    counters.startup_ns += end - started
                    self._cuda_batches = self._cuda_batches or _on_cuda(item)  # a first batch
            elif facts["batches"] == 1:
                self._cuda_batches = self._cuda_batches or _on_cuda(item)
        return item

    def _in_last_batch(self, tensor: Any) -> bool:
        if self._last_storages is None:
            self._last_storages = _batch_storages(self._last_batch)
        return _storage(tensor) in self._last_storages

    def _batch_used(self, training: bool) -> None:
        """A module ran, in training mode or not, inside the step of the last timed batch."""
        if self._last_input is not None:
            self._input_counters[self._last_input].used(self._batches, training)

    def _forward_seen(self, torch: Any, module: Any, inputs: Any) -> None:
        """A module's forward inside a step: its mode, autograd, device, autocast, kind."""
        self._batch_used(module.training)
        seen = self._forwards
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
        _untime_dataloaders()
        _unwatch_habits()
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
        self._settle_inputs()
        loop.input_pool = self._input_pool()
        reads = self._host_read_sites()
        habits = _native.LoopHabits()
        habits.host_reads = sum(site["count"] for site in reads)
        if reads:
            habits.host_read_site = f"{reads[0]['where']} {reads[0]['call']}"
        habits.data_parallel = self._data_parallel
        habits.empty_cache_calls = self._empty_cache_calls
        moves = self._sites(self._host_moves)
        habits.host_tensor_moves = sum(site["count"] for site in moves)
        if moves:
            habits.host_tensor_site = f"{moves[0]['where']} {moves[0]['call']}"
        seen = self._forwards
        for name in ("eval_grad_forwards", "eval_grad_site", "forwards", "training_forwards",
                     "cuda_forwards", "autocast_dtype", "convolutions"):
            setattr(habits, name, getattr(seen, name))
        if torch is not None and seen.cuda_forwards:
            habits.bf16_supported = bool(torch.cuda.is_bf16_supported())
            habits.cudnn_benchmark = bool(torch.backends.cudnn.benchmark)
        loop.habits = habits
        self._datasets.clear()
        self._last_batch = self._last_storages = None
        busiest = self._busiest_loader()
        if busiest is None:
            self._report = native.finish(None, loop)
        else:
            source, baseline, epochs = busiest
            loop.epochs = epochs
            self._report = native.finish(source.__gpufeed_facts__(baseline), loop)
        self._write_outputs()

    def _host_read_sites(self) -> list:
        """Host reads of tensors inside the steps by where they are, the commonest first."""
        return self._sites(self._host_reads)

    @staticmethod
    def _sites(counts: dict) -> list:
        """{(file, line, method): count} as sites, the commonest first."""
        sites = [
            {"where": f"{os.path.basename(path)}:{line}", "call": f".{name}()", "count": count,
             "file": path}
            for (path, line, name), count in counts.items()
        ]
        return sorted(sites, key=lambda s: -s["count"])

    def _write_outputs(self) -> None:
        report = self._report
        paths = {what: None if path is None else
                 _native.per_rank_path(path, self._rank, self._world_size)
                 for what, path in self._outputs.items()}
        if paths["trace"]:
            report.write_trace(paths["trace"])
        if paths["report"]:
            report.write_report(paths["report"])
        if paths["json"]:
            path = paths["json"]
            temporary = f"{path}.tmp.{os.getpid()}"
            with open(temporary, "w") as f:
                f.write(_json.dumps(self.results(), indent=2) + "\n")
            os.replace(temporary, path)

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
                self._input_line())
        return text

    def _input_line(self) -> str:
        """The summary's line on the timed inputs: the DataLoaders, with their batches and
        what they fed when there are several, and the fetches of the one diagnosed."""
        def name(i: dict) -> str:
            return f"DataLoader(num_workers={i['num_workers']}, batch_size={i['batch_size']})"

        inputs = list(self._inputs.values())
        if len(inputs) <= 1:
            source = name(inputs[0]) if inputs else "prof.input()"
            sources = f"{self._batches} batches from {source}"
        else:
            parts = []
            for i in inputs:
                notes = ", ".join(n for n in (i["role"], i["diagnosed"] and "diagnosed") if n)
                parts.append(f"{i['batches']} from {name(i)}" + (f" ({notes})" if notes else ""))
            sources = f"{self._batches} batches: {', '.join(parts)}"
        fed = next((i for i in inputs if i["diagnosed"]), None)
        f = fed["fetch"] if fed is not None else None
        inside = "its work inside is not seen"
        if f and f["samples"]:
            item_ms = (f["fetch_ns"] - f["collate_ns"]) / f["samples"] * 1e-6
            collate_ms = f["collate_ns"] / f["batches"] * 1e-6
            whose = "its" if len(inputs) <= 1 else "the diagnosed one's"
            inside = (f"{whose} fetches: {item_ms:.2f} ms a sample in the dataset, "
                      f"{collate_ms:.2f} ms a batch in collate_fn")
        return f"input       {sources}, each next() timed as a wait for input; {inside}\n"

    def _fed_samples(self) -> int:
        """The samples of the batches that fed the training steps: the diagnosed DataLoader's
        (a validation loader's are not the loop's throughput), else every timed batch's."""
        fed = next((i for i in self._inputs.values() if i["diagnosed"]), None)
        return fed["samples"] if fed is not None and fed["samples"] else self._timed_samples

    def results(self) -> dict:
        """The diagnosis as data: pipebench's --json keys (samples_per_s, device_util,
        idle_by_cause, bottleneck_stage, verdict, stages, echo, practices, profile, ...), and
        ``inputs``: the DataLoaders the loop read, each with its settings and its own counters
        (batches, samples, fetches, starts), its ``role`` ("training" or "evaluation", by the
        modules its batches went through) and whether it is the one ``diagnosed``: the one
        that fed the training steps, whose samples are ``samples``."""
        out = _json.loads(self._finished().json())
        out["inputs"] = list(self._inputs.values())
        out["timed_batches"] = self._batches
        samples = self._fed_samples()
        if not out.get("samples") and samples:
            # No gpufeed.Loader counted them: the timed inputs' batches did, over the profile.
            wall_s = (self._exited_ns - self._entered_ns) * 1e-9
            out["samples"] = samples
            out["wall_s"] = wall_s
            out["samples_per_s"] = samples / wall_s if wall_s > 0 else 0.0
        steps = out.get("steps") or 0
        sites = self._host_read_sites()
        out["host_reads"] = {
            "count": sum(s["count"] for s in sites),
            "per_step": sum(s["count"] for s in sites) / steps if steps else None,
            "sites": sites,
        }
        moves = self._sites(self._host_moves)
        out["host_tensor_moves"] = {
            "count": sum(s["count"] for s in moves),
            "per_step": sum(s["count"] for s in moves) / steps if steps else None,
            "sites": moves,
        }
        return out
