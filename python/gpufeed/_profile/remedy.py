"""The pack advice's remedy, measured: up to 64 of a dataset's items packed as gpufeed.pack would
and read back by a gpufeed.Loader on every core. The items are the user's code, and one of them
may kill its process, hang or take all the memory, as in training: so they are read in a child
process (forked: the dataset needs no pickling; one intra-op thread, as a DataLoader worker)
with a time and a memory limit, whose death or timeout is a rate "not measured", with why,
never the training process's end. The items come back pickled, and gpufeed packs and reads
them here: a child forked from a process whose oneTBB already runs cannot run oneTBB itself
(its first arena waits forever), and neither can a Loader."""

from __future__ import annotations

import dataclasses
import os
import pickle
import signal
import sys
import time
from typing import Any, Optional

from .. import _native
from .._pack import _image_files, _Items, _name, _store_for, pack, untransformed
from .memory import available_bytes, private_bytes


@dataclasses.dataclass(frozen=True)
class PackedRate:
    """What gpufeed read a packed sample of a dataset at."""

    samples_per_s: float
    items: int  # items packed
    store: str  # "raw" or "jpeg"
    note: str  # why no rate was measured, or ""
    # The process's CPU time a sample took while reading (every core's: decoding, the batch's
    # transform ops), and of it the consumer's thread's: the transform ops that run on the
    # delivered batch, one after the other with the training step. 0: not measured.
    core_ns_per_sample: float = 0.0
    consumer_ns_per_sample: float = 0.0


@dataclasses.dataclass(frozen=True)
class Limits:
    """What the measuring process may take before it is stopped: wall time, and memory of its
    own (pages it wrote, beyond those it shares with the training process it was forked from)."""

    seconds: float = 30.0
    memory_bytes: Optional[int] = None  # None: a quarter of the memory available when it starts


DEFAULT_LIMITS = Limits()


def measure_apart(dataset: Any, batch_size: int, size: Optional[tuple],
                  limits: Optional[Limits] = None) -> PackedRate:
    """What gpufeed.pack then gpufeed.Loader would deliver on this machine for ``dataset``: up
    to 64 of its items, spread over it (fewer when fetching them takes over a second), read in
    a forked child process within `limits` (DEFAULT_LIMITS), packed into a temporary file here
    and read by a gpufeed.Loader on every core for about half a second, with the dataset's own
    transform where the Loader takes it (``size``: the training size of a jpeg-layout file).
    A rate of 0 whose note says why when the items cannot be packed, or when the child died,
    failed or ran out of its limits."""
    import multiprocessing

    limits = limits or DEFAULT_LIMITS
    memory_limit = limits.memory_bytes or max(256 << 20, available_bytes() // 4)
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(send, dataset), name="gpufeed-pack-rate",
                            daemon=True)
    try:
        child.start()
    except OSError as error:
        return _not_measured(f"no process to read its items in could be started ({error})")
    send.close()
    try:
        picked = _wait(child, receive, limits.seconds, memory_limit)
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    if isinstance(picked, PackedRate):
        return picked
    items, store = picked
    try:
        return _read_packed(_name(dataset), items, store, getattr(dataset, "transform", None),
                            batch_size, size, 0.5)
    except Exception as error:  # noqa: BLE001 - a remedy not measured never fails the loop
        return PackedRate(0.0, 0, store, "gpufeed could not read a packed sample of it "
                          f"({type(error).__name__}: {error})")


def _wait(child: Any, receive: Any, seconds: float, memory_limit: int) -> Any:
    """What the child sent (its items and their store, or a PackedRate saying why none), or a
    PackedRate saying how it ended."""
    deadline = time.monotonic() + seconds
    peak = 0
    while True:
        if receive.poll(0.05):
            try:
                return pickle.loads(receive.recv_bytes())
            except (EOFError, OSError, pickle.UnpicklingError):
                break  # it died while sending: said below
        peak = max(peak, private_bytes(child.pid))
        if peak > memory_limit:
            child.kill()
            return _not_measured(f"the process measuring it took {peak >> 20} MiB of memory "
                                 f"of its own, over its limit of {memory_limit >> 20} MiB")
        if time.monotonic() > deadline:
            child.kill()
            return _not_measured(f"the process measuring it ran out of its {seconds:g} s "
                                 "(an item that hangs, or a slow one)")
        if not child.is_alive() and not receive.poll(0):
            break
    child.join()
    code = child.exitcode
    if code is not None and code < 0:
        how = f"was killed by {signal.Signals(-code).name}"
    else:
        how = f"exited with status {code}"
    return _not_measured(f"the process measuring it {how} (an item that ends its process, or "
                         f"the kernel's OOM killer), after {peak >> 20} MiB of its own")


def _not_measured(why: str) -> PackedRate:
    return PackedRate(0.0, 0, "raw", f"not measured: {why}")


def _child(send: Any, dataset: Any) -> None:
    """The process that reads the items: the first the kernel's OOM killer takes, never the
    trainer. Sends (items, store) or a PackedRate, pickled (no shared memory: it exits)."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)  # the parent's OpenMP pool is not this process's
    try:
        with untransformed(dataset):
            picked = _pick(dataset, 64, 1.0)
        data = pickle.dumps(picked, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:  # noqa: BLE001 - any failure of the items: said, not raised
        data = pickle.dumps(PackedRate(0.0, 0, "raw", "its items could not be read or sent "
                                       f"({type(error).__name__}: {error})"))
    send.send_bytes(data)
    send.close()


def _pick(dataset: Any, items: int, budget_s: float) -> Any:
    """(the items fetched, their store), or a PackedRate saying why none can be."""
    files = _image_files(dataset)
    source = dataset if files is None else _Items(_name(dataset), files)
    try:
        total = len(source)
        first = source[0]
    except Exception as error:  # noqa: BLE001 - any dataset's failure: say it, measure nothing
        return PackedRate(0.0, 0, "raw",
                          f"its items could not be read ({type(error).__name__}: {error})")
    if not isinstance(first, (tuple, list)) or len(first) != 2:
        return PackedRate(0.0, 0, "raw",
                          f"its items are {type(first).__name__}, not (image, label) pairs")
    store = "jpeg" if files is not None else _store_for(first[0])
    count = max(1, min(items, total))
    indices = sorted({int(i * total / count) for i in range(count)})
    picked = [first]
    start = time.perf_counter()
    for index in indices[1:]:
        if time.perf_counter() - start > budget_s and len(picked) >= 8:
            break
        picked.append(source[index])
    return picked, store


def repeated(picked: list, batch_size: int, batches: int = 16,
             budget_bytes: int = 64 << 20) -> list:
    """``picked`` repeated to ``batches`` batches of ``batch_size`` (at most ``budget_bytes`` of
    items, at least once): a file of a few batches is read in epochs whose starts and ends are
    most of its time (64 items in batches of 16 read at 0.7x the rate of the whole folder's
    file), where a training epoch has hundreds of batches."""
    size = _item_bytes(picked[0][0])
    if size <= 0:
        return picked  # a size not told: the file stays as small as the sample
    wanted = min(batches * max(1, batch_size), budget_bytes // size)
    return picked * max(1, -(-wanted // len(picked)))


def _item_bytes(image: Any) -> int:
    """What an item's image takes in a packed file, about: a file's size, encoded bytes, or
    its pixels (arrays, tensors, PIL images); 0 when it cannot be told."""
    if isinstance(image, (str, os.PathLike)):
        return os.path.getsize(image)
    if isinstance(image, (bytes, bytearray, memoryview)):
        return len(image)
    try:
        import numpy as np

        return int(np.asarray(image).nbytes)
    except Exception:  # noqa: BLE001 - an image numpy cannot read is packed once, not measured
        return 0


def _read_packed(name: str, picked: list, store: str, transform: Any, batch_size: int,
                 size: Optional[tuple], read_s: float) -> PackedRate:
    """Packs `picked` into a temporary file and reads it with a gpufeed.Loader for `read_s`,
    with the dataset's own `transform` where the Loader takes it: the rate of the advice."""
    import tempfile

    from .._loader import Loader

    with tempfile.TemporaryDirectory(prefix="gpufeed-pack-rate-") as directory:
        path = os.path.join(directory, "sample.h5")
        try:
            pack(_Items(name, repeated(picked, batch_size)), path, store=store,
                 chunk=max(1, min(64, len(picked))), keep_order=True, progress=False)
        except (_native.FormatError, _native.UsageError) as error:
            return PackedRate(0.0, 0, store, str(error).replace("gpufeed.pack: ", ""))
        keywords = {"size": size} if store == "jpeg" and size else {}
        output = "numpy"
        if transform is not None:
            from .._transform import plan_transform

            try:
                plan_transform(transform)
                keywords, output = {"transform": transform}, "torch"
            except _native.UsageError:
                pass  # the advice names the op; the rate is the fused part's
        loader = Loader(path, batch_size=max(1, min(batch_size, len(picked))), order="random",
                        output=output, **keywords)
        try:
            delivered, elapsed, cpu, transform_s = _read_for(loader, read_s)
        finally:
            loader.close()
    if delivered == 0 or elapsed <= 0:
        return PackedRate(0.0, len(picked), store, "gpufeed delivered no batch of it")
    return PackedRate(delivered / elapsed, len(picked), store, "", cpu / delivered,
                      transform_s * 1e9 / delivered)


def _read_for(loader: Any, read_s: float) -> tuple:
    """Epochs of `loader` for about `read_s` after its first batch (start-up aside): samples
    delivered, seconds, CPU ns, and seconds in the transform ops on the consumer's thread."""
    delivered, begin, cpu, transform_s = 0, None, 0, 0.0
    while begin is None or time.perf_counter() - begin < read_s:
        for images, _ in loader:
            if begin is None:
                begin, cpu = time.perf_counter(), time.process_time_ns()
                transform_s = loader.stats().stages["transform"].busy_s
                continue
            delivered += len(images)
    elapsed = time.perf_counter() - begin
    cpu = time.process_time_ns() - cpu
    transform_s = loader.stats().stages["transform"].busy_s - transform_s
    return delivered, elapsed, cpu, transform_s
