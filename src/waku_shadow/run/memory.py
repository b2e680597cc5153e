"""The machine's memory as a run sees it: what is available, where a run's memory goes, and merging
identical pages.

Peak memory is measured system-wide, as the largest fall of the kernel's
MemAvailable below its value when the run started: it counts Shadow, every
managed nwaku process and the shared memory between them once, and it is the
number that decides whether the machine runs out. Where it goes is sampled
alongside (``MemoryBreakdown``): Shadow's own resident memory, the managed
processes' private (anonymous) memory and the system's shared memory, taken at
the sample closest to the peak.

With ``merge_identical_pages`` Shadow and every process it starts ask the kernel
to merge their identical private pages (KSM, prctl PR_SET_MEMORY_MERGE, inherited
across fork and exec since Linux 6.8). Under Shadow every node runs one binary at
the same addresses, so much of an idle node's memory is the same page for page.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from pathlib import Path

from waku_shadow import layout
from waku_shadow.errors import RunError

GIB = 1024**3
KSM = Path("/sys/kernel/mm/ksm")
PR_SET_MEMORY_MERGE, PR_GET_MEMORY_MERGE = 67, 68
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _meminfo_bytes(field: str) -> int:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    raise RunError(f"cannot read {field} from /proc/meminfo")


def available_bytes() -> int:
    return _meminfo_bytes("MemAvailable")


def total_bytes() -> int:
    return _meminfo_bytes("MemTotal")


@dataclass
class MemoryBreakdown:
    """Where a run's memory is at one moment: Shadow's own, its processes' private, and shared."""

    wall_seconds: float
    taken_bytes: int  # the fall of MemAvailable since the run started
    shadow_rss_bytes: int
    processes: int
    processes_anon_bytes: int  # private memory of the managed processes (heaps, stacks, relocated data)
    processes_file_bytes: int  # file-backed pages, counted once per process though the page cache shares them
    shmem_bytes: int  # the system's Shmem: Shadow's shared memory with its processes, and tmpfs files
    merged_bytes: int = 0  # what merging identical pages saves, system-wide (KSM's pages_sharing)
    # per role of identities.csv (relay, service, light): its nwaku processes and their private memory
    nodes_by_role: dict[str, int] = field(default_factory=dict)
    anon_bytes_by_role: dict[str, int] = field(default_factory=dict)


def _status_fields(pid: int | str) -> dict[str, int]:
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "RssShmem"):
                fields[key] = int(value.split()[0]) * 1024
    return fields


def _stat(pid: int | str) -> tuple[str, list[str]]:
    """A process's command and the fields of /proc/PID/stat after it: state ppid pgrp session tty
    tpgid flags minflt cminflt majflt cmajflt utime stime ... (the command is parenthesised and may
    hold spaces and parentheses itself)."""
    with open(f"/proc/{pid}/stat") as stat:
        command, after_command = stat.read().rsplit(")", 1)
    return command.split("(", 1)[1], after_command.split()


def _session_members(session: int) -> list[int]:
    """Every process in ``session`` (Shadow's own, which it shares with the processes it manages)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            _, fields = _stat(entry.name)
        except OSError:
            continue
        if int(fields[3]) == session:
            members.append(int(entry.name))
    return members


def busiest_processes(session: int, run_dir: Path, count: int = 2) -> list[tuple[str, float]]:
    """The ``count`` processes of Shadow's session (Shadow itself left out) that have used the most CPU,
    each named by its Shadow host (the folder it runs in) or else its command, with its CPU seconds."""
    hosts = (run_dir / layout.SHADOW_DATA / "hosts").resolve()
    used = []
    for pid in _session_members(session):
        if pid == session:
            continue
        try:
            program, fields = _stat(pid)
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:  # exited between listing and reading
            continue
        utime, stime = int(fields[11]), int(fields[12])
        name = f"{cwd.name}'s {program}" if cwd.parent == hosts else program
        used.append((name, (utime + stime) / os.sysconf("SC_CLK_TCK")))
    return sorted(used, key=lambda named: -named[1])[:count]


def session_pss_bytes(session: int) -> int:
    """The proportional set size of every process in the session: each shared page (Shadow's shared
    memory with its processes, merged pages, the page cache) counted once over all who map it.

    Shadow itself, the session's leader, is counted by its resident size: smaps_rollup walks every
    mapping under the process's memory lock, and Shadow's allocator (jemalloc) maps and returns
    memory often enough that one read of a 1000-node run's Shadow took seconds, the guard's loop
    waiting with it. Its pages shared with the nodes are a few MiB (MemoryBreakdown.shmem_bytes)."""
    total = 0
    for pid in _session_members(session):
        try:
            if pid == session:
                total += sum(_status_fields(pid).values())
                continue
            with open(f"/proc/{pid}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:  # exited between listing and reading
            continue
    return total


def breakdown(shadow_pid: int, wall_seconds: float, taken_bytes: int, role_of_host: dict[str, str] | None = None,
              nwaku_program: str = "wakunode2") -> MemoryBreakdown:
    """The memory of Shadow's session now; with ``role_of_host`` (host -> role) the private memory of
    each role's ``nwaku_program`` processes too, each process named by the host folder it runs in."""
    shadow = anon = file = count = 0
    nodes_by_role: dict[str, int] = {}
    anon_by_role: dict[str, int] = {}
    for pid in _session_members(shadow_pid):
        try:
            fields = _status_fields(pid)
        except OSError:  # exited between listing and reading
            continue
        if not fields:  # a zombie has no memory left
            continue
        if pid == shadow_pid:
            shadow = sum(fields.values())
        else:
            count += 1
            anon += fields["RssAnon"]
            file += fields["RssFile"]
            role = _role(pid, role_of_host, nwaku_program) if role_of_host else None
            if role is not None:
                nodes_by_role[role] = nodes_by_role.get(role, 0) + 1
                anon_by_role[role] = anon_by_role.get(role, 0) + fields["RssAnon"]
    return MemoryBreakdown(
        wall_seconds=round(wall_seconds, 1),
        taken_bytes=taken_bytes,
        shadow_rss_bytes=shadow,
        processes=count,
        processes_anon_bytes=anon,
        processes_file_bytes=file,
        shmem_bytes=_meminfo_bytes("Shmem"),
        merged_bytes=_ksm_pages("pages_sharing") * PAGE_SIZE,
        nodes_by_role=nodes_by_role,
        anon_bytes_by_role=anon_by_role,
    )


def _role(pid: int, role_of_host: dict[str, str], nwaku_program: str) -> str | None:
    """The role of the host a process of ``nwaku_program`` runs in (its working folder); None for another
    program, or a process that exited meanwhile."""
    try:
        program, _ = _stat(pid)
        if program != nwaku_program[:15]:  # the kernel keeps the first 15 characters of a command
            return None
        return role_of_host.get(Path(os.readlink(f"/proc/{pid}/cwd")).name)
    except OSError:
        return None


def _ksm_pages(counter: str) -> int:
    try:
        return int((KSM / counter).read_text())
    except (OSError, ValueError):
        return 0


_libc = ctypes.CDLL(None, use_errno=True)


def check_page_merging() -> None:
    """Raise RunError unless this kernel can merge a process's identical pages and KSM is running."""
    if _libc.prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) < 0:
        raise RunError(
            "resources.merge_identical_pages: this kernel cannot merge a process's pages "
            f"(prctl PR_GET_MEMORY_MERGE: {os.strerror(ctypes.get_errno())}; needs Linux 6.8 or later); set it false"
        )
    try:
        running = (KSM / "run").read_text().strip() == "1"
    except OSError:
        running = False
    if not running:
        raise RunError(
            f"resources.merge_identical_pages: the kernel's page merging (KSM) is not running ({KSM / 'run'} is not 1); "
            f"as root: echo 1 > {KSM / 'run'}, or set it false"
        )


def merge_identical_pages() -> None:
    """In Shadow's process before it starts: its pages and its children's may be merged."""
    if _libc.prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) < 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_MEMORY_MERGE)")


def gib(n: int) -> str:
    return f"{n / GIB:.1f} GiB"
