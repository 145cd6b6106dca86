"""Where a process that fetches samples says what it is doing, for another thread or process to
read without asking it: a SampleBoard holds the sample a fetch is in and since when (in memory
for this process, in a small mapped file for a DataLoader worker), and a StackFile is where
faulthandler writes a worker's Python stack when a fetch outlasts its time (no signal, no
cooperation from the Dataset's code; faulthandler's own thread writes it, GIL or not)."""

from __future__ import annotations

import faulthandler
import mmap
import os
import struct
from typing import Any, Optional, Tuple

from .. import _native

_LAYOUT = struct.Struct("<qqq")  # the sample (-1: none, -2: not an int), its start, the batch's
_NONE = -1


class SampleBoard:
    """The sample a fetch is in, since when, and when its batch began: written by the fetching
    thread (one writer), read by anyone (a torn read is one stale field, never a crash)."""

    def __init__(self, buffer: Any = None) -> None:
        self._buffer = buffer if buffer is not None else bytearray(_LAYOUT.size)
        _LAYOUT.pack_into(self._buffer, 0, _NONE, 0, 0)

    @staticmethod
    def in_file(path: str) -> "SampleBoard":
        """A board in a file of its own, for a worker process (the profile reads the file)."""
        with open(path, "w+b") as f:
            f.write(bytes(_LAYOUT.size))
            f.flush()
            buffer = mmap.mmap(f.fileno(), _LAYOUT.size)
        return SampleBoard(buffer)

    def enter(self, sample: Any) -> None:
        now = _native.now_ns()
        if type(sample) is not int:
            sample = -2
        _, _, batch = _LAYOUT.unpack_from(self._buffer, 0)
        _LAYOUT.pack_into(self._buffer, 0, sample, now, batch or now)

    def leave(self) -> None:
        _LAYOUT.pack_into(self._buffer, 0, _NONE, 0, 0)

    def read(self) -> Optional[Tuple[int, int, int]]:
        """(sample, since ns, batch since ns), or None when no fetch is under way."""
        return _parse(self._buffer)

    @staticmethod
    def read_file(path: str) -> Optional[Tuple[int, int, int]]:
        try:
            with open(path, "rb") as f:
                data = f.read(_LAYOUT.size)
        except OSError:
            return None
        return _parse(data) if len(data) == _LAYOUT.size else None


def _parse(data: Any) -> Optional[Tuple[int, int, int]]:
    sample, since, batch = _LAYOUT.unpack_from(data, 0)
    return None if since == 0 else (sample, since, batch)


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
