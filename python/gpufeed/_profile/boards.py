"""Where a process that fetches samples says what it is doing, for another thread or process to
read without asking it: a SampleBoard holds the sample a fetch is in and when it began (in memory
for this process, in a small mapped file for a DataLoader worker), and a StackFile is where
faulthandler writes a worker's Python stack when a fetch outlasts its time (no signal, no
cooperation from the Dataset's code; faulthandler's own thread writes it, GIL or not)."""

from __future__ import annotations

import faulthandler
import mmap
import os
import struct
from typing import Any, Iterable, Iterator, Optional, Tuple

from .. import _native

_LAYOUT = struct.Struct("<qq")  # the sample (-1: none yet, -2: not an int), its fetch's start
_SAMPLE = struct.Struct("<q")  # the first alone: written once a sample
_NONE = -1


class SampleBoard:
    """The sample a fetch is in and when the fetch began: written by the fetching thread (one
    writer), read by anyone (a torn read is one stale field, never a crash). A sample costs one
    8-byte write (0.1 us), not a clock read: the time is the fetch's."""

    def __init__(self, buffer: Any = None) -> None:
        self.buffer = buffer if buffer is not None else bytearray(_LAYOUT.size)
        _LAYOUT.pack_into(self.buffer, 0, _NONE, 0)

    @staticmethod
    def in_file(path: str) -> "SampleBoard":
        """A board in a file of its own, for a worker process (the profile reads the file)."""
        with open(path, "w+b") as f:
            f.write(bytes(_LAYOUT.size))
            f.flush()
            buffer = mmap.mmap(f.fileno(), _LAYOUT.size)
        return SampleBoard(buffer)

    def begin(self) -> None:
        """A fetch begins."""
        _LAYOUT.pack_into(self.buffer, 0, _NONE, _native.now_ns())

    def samples(self, indices: Iterable) -> Iterator:
        """`indices`, each written to the board as the fetch takes it."""
        pack, buffer = _SAMPLE.pack_into, self.buffer
        for sample in indices:
            pack(buffer, 0, sample if type(sample) is int else -2)
            yield sample

    def leave(self) -> None:
        _LAYOUT.pack_into(self.buffer, 0, _NONE, 0)

    def read(self) -> Optional[Tuple[int, int]]:
        """(sample or -1, when the fetch began in ns), or None when no fetch is under way."""
        return _parse(self.buffer)

    @staticmethod
    def read_file(path: str) -> Optional[Tuple[int, int]]:
        try:
            with open(path, "rb") as f:
                data = f.read(_LAYOUT.size)
        except OSError:
            return None
        return _parse(data) if len(data) == _LAYOUT.size else None


def _parse(data: Any) -> Optional[Tuple[int, int]]:
    sample, begin = _LAYOUT.unpack_from(data, 0)
    return None if begin == 0 else (sample, begin)


class StackFile:
    """A worker's file for faulthandler: armed at the start of each fetch, it receives the
    worker's Python stack if the fetch outlasts `after_s`; disarmed (and emptied, if written)
    when the fetch ends."""

    def __init__(self, path: str, after_s: float) -> None:
        self._file = open(path, "w+")  # noqa: SIM115 - held open for faulthandler's thread
        self._fd = self._file.fileno()
        self._after_s = after_s

    def arm(self) -> None:
        faulthandler.dump_traceback_later(self._after_s, repeat=False, file=self._file)

    def disarm(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        if os.lseek(self._fd, 0, os.SEEK_CUR) > 0:
            os.ftruncate(self._fd, 0)
            os.lseek(self._fd, 0, os.SEEK_SET)

    @staticmethod
    def read(path: str) -> str:
        """The stack written there: the fetching thread's (the one inside a fetch; faulthandler
        writes every thread's), most recent call first; "" when none was written."""
        try:
            with open(path, errors="replace") as f:
                text = f.read()
        except OSError:
            return ""
        blocks: list = []
        for line in text.splitlines():
            if line.startswith(("Thread ", "Current thread ")):
                blocks.append([])
            elif blocks and line.strip():
                blocks[-1].append(line.strip())
        fetching = [b for b in blocks if any(" in fetch" in line for line in b)]
        chosen = (fetching or blocks or [[]])[0]
        return "\n".join(chosen)
