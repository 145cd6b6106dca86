"""The running gpufeed.profile, for the inputs that report to it: a module that imports nothing
of gpufeed, so that gpufeed.Loader reaches the profile without importing it (the profile's pack
advice imports the loader)."""

from __future__ import annotations

import threading
from typing import Any

active: Any = None  # the gpufeed.profile running in this process, or None
lock = threading.Lock()  # held while a profile starts and while it ends


def note_input(source: Any) -> None:
    """Called by an input source (every gpufeed.Loader) when it is made or starts an epoch: the
    running profile, if any, takes the input side's facts (workers, prefetch, stage counters)
    from the sources it sees. A source implements the input protocol:
    ``__gpufeed_counters__()`` (a snapshot of its counters, taken when the profile first sees
    it) and ``__gpufeed_facts__(since)`` (its settings and its counters since that snapshot),
    plus ``stats()["samples"]`` and ``closed``."""
    current = active
    if current is not None:
        current._see(source)
