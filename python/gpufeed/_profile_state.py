"""The running gpufeed.profile, for the inputs that report to it: a module that imports nothing
of gpufeed, so that gpufeed.Loader reaches the profile without importing it (the profile's pack
advice imports the loader)."""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

active: Any = None  # the gpufeed.profile running in this process, or None
lock = threading.Lock()  # held while a profile starts and while it ends


@runtime_checkable
class InputSource(Protocol):
    """An input source that reports to gpufeed.profile (every gpufeed.Loader is one): the
    profile times it itself rather than wrapping it, and takes the input side's facts (workers,
    prefetch, stage counters) from it."""

    @property
    def closed(self) -> bool:
        """Whether the source was closed (its facts are then final)."""
        ...

    def stats(self) -> Any:
        """Its counters, a gpufeed.LoaderStats; ``stats().samples`` the samples it delivered."""
        ...

    def profile_snapshot(self) -> Any:
        """A snapshot of its counters, taken when the profile first sees it."""
        ...

    def profile_facts(self, since: Any) -> Any:
        """Its settings and its counters since `since` (a profile_snapshot())."""
        ...


def note_input(source: InputSource) -> None:
    """Called by an input source when it is made or starts an epoch: the running profile, if
    any, takes the source's facts when it finishes."""
    current = active
    if current is not None:
        current._see(source)
