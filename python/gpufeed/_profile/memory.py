"""Memory as Linux tells it: a process's resident and private bytes (/proc/PID), the machine's
(/proc/meminfo) and the limit of the memory cgroup this process runs in (v2, or v1's memory
controller), with the cgroup's OOM-kill counter. Every reader answers 0 or None where the file
is not there (another OS, no memory cgroup, a process already gone): the profile then says
less, never fails."""

from __future__ import annotations

import dataclasses
import os
from typing import Optional

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes(pid: int) -> int:
    """The resident set of process `pid` (its shared pages included), 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def private_bytes(pid: int) -> int:
    """The pages process `pid` holds alone: what a forked child added to what it shares with
    its parent (0 when it is gone)."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith((b"Private_Clean:", b"Private_Dirty:")):
                    total += int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        return rss_bytes(pid)
    return total


def _meminfo(key: bytes) -> int:
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        pass
    return 0


@dataclasses.dataclass(frozen=True)
class _Cgroup:
    """A process's memory cgroup: its directory and the names of its files (v2 or v1)."""

    directory: str
    limit: str  # memory.max or memory.limit_in_bytes
    usage: str  # memory.current or memory.usage_in_bytes
    events: str  # memory.events or memory.oom_control: both have an "oom_kill N" line


def _cgroup(pid: str = "self") -> Optional[_Cgroup]:
    """The memory cgroup of process `pid` (cgroup v2, or v1's memory controller), or None."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            found = _Cgroup(os.path.join("/sys/fs/cgroup/memory", path.lstrip("/")),
                            "memory.limit_in_bytes", "memory.usage_in_bytes",
                            "memory.oom_control")
            return found if os.path.isdir(found.directory) else None
    for line in lines:
        if line.startswith("0::"):
            found = _Cgroup(os.path.join("/sys/fs/cgroup", line[3:].lstrip("/")), "memory.max",
                            "memory.current", "memory.events")
            if os.path.exists(os.path.join(found.directory, found.limit)):
                return found
    return None


def _read_number(cgroup: _Cgroup, name: str) -> Optional[int]:
    """A cgroup file's number; None for "max" (v2) or v1's unlimited (2^63 rounded to pages)."""
    try:
        with open(os.path.join(cgroup.directory, name)) as f:
            text = f.read().strip()
    except OSError:
        return None
    if not text.isdigit() or int(text) >= 1 << 62:
        return None
    return int(text)


def oom_kills(cgroup: Optional[_Cgroup] = None) -> Optional[int]:
    """The cgroup's OOM-kill counter (the oom_kill line of memory.events, or of v1's
    memory.oom_control), or None where there is none."""
    cgroup = cgroup or _cgroup()
    if cgroup is None:
        return None
    try:
        with open(os.path.join(cgroup.directory, cgroup.events)) as f:
            for line in f:
                name, _, value = line.partition(" ")
                if name == "oom_kill":
                    return int(value)
    except (OSError, ValueError):
        pass
    return None


@dataclasses.dataclass(frozen=True)
class MemoryLimits:
    """The limits a process's memory meets: the machine's, and its cgroup's (None: none)."""

    machine_bytes: int
    cgroup_bytes: Optional[int]
    cgroup: Optional[str]  # its directory, where the OOM-kill counter is
    oom_kills: Optional[int]  # the counter when read

    @staticmethod
    def now() -> "MemoryLimits":
        cgroup = _cgroup()
        limit = None if cgroup is None else _read_number(cgroup, cgroup.limit)
        return MemoryLimits(_meminfo(b"MemTotal:"), limit,
                            None if cgroup is None else cgroup.directory, oom_kills(cgroup))

    def describe(self) -> str:
        machine = f"the machine's {self.machine_bytes / (1 << 30):.1f} GiB"
        if self.cgroup_bytes is None:
            return machine + " (no cgroup memory limit)"
        return f"{machine}, its cgroup's limit {self.cgroup_bytes / (1 << 20):.0f} MiB"


def available_bytes() -> int:
    """What this process may still allocate: the machine's available memory, or less where its
    cgroup's limit leaves less."""
    available = _meminfo(b"MemAvailable:") or (1 << 30)
    cgroup = _cgroup()
    if cgroup is not None:
        limit = _read_number(cgroup, cgroup.limit)
        current = _read_number(cgroup, cgroup.usage)
        if limit is not None and current is not None:
            available = min(available, max(0, limit - current))
    return available
