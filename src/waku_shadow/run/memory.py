"""The machine's memory as a run sees it: what is available, what the run itself holds, and merging
identical pages.

A run's own memory is what it holds resident: Shadow's resident set (its heap, the packets in
flight, its shared memory with its processes) and every managed process's private (anonymous)
memory, less what merged pages save (``MemoryBreakdown.own_bytes``). It is read from each
process's /proc/PID/status, whose counters the kernel keeps without the process's memory lock, so a
pass over 1000 nodes takes ~50 ms and the guard samples it every SAMPLE_INTERVAL_S through the whole
run: the peak cannot fall between samples taken minutes apart, as a pass over every node's
smaps_rollup did (20 to 50 s each, waiting on busy nodes). Left out: the nodes' file-backed pages
(the binary and its libraries, one copy in the page cache for them all).

The machine's fall, the largest drop of the kernel's MemAvailable below its value when the run
started, is what decides whether the machine runs out; it counts whatever else ran beside the run.
Each sample also records how much the kernel's own memory for the run grew (page tables, kernel
stacks, unreclaimable slab: ``kernel_bytes``), which with the page cache of the logs is most of the
difference between the two.

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
    own_bytes: int = 0  # the run's own: shadow_rss_bytes + processes_anon_bytes - merged_bytes (0 before it was recorded)
    kernel_bytes: int = 0  # growth since the run started of page tables, kernel stacks and unreclaimable slab
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


KERNEL_FIELDS = ("PageTables", "KernelStack", "SUnreclaim")


def kernel_bytes() -> int:
    """The kernel's memory that grows with a run's processes: page tables, kernel stacks, unreclaimable slab."""
    return sum(_meminfo_bytes(name) for name in KERNEL_FIELDS)


def breakdown(shadow_pid: int, wall_seconds: float, taken_bytes: int, role_of_host: dict[str, str] | None = None,
              nwaku_program: str = "wakunode2", kernel_baseline_bytes: int | None = None) -> MemoryBreakdown:
    """The memory of Shadow's session now; with ``role_of_host`` (host -> role) the private memory of
    each role's ``nwaku_program`` processes too, each process named by the host folder it runs in;
    with ``kernel_baseline_bytes`` (kernel_bytes() when the run started) how much the kernel's grew."""
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
    merged = _ksm_pages("pages_sharing") * PAGE_SIZE
    return MemoryBreakdown(
        wall_seconds=round(wall_seconds, 1),
        taken_bytes=taken_bytes,
        shadow_rss_bytes=shadow,
        processes=count,
        processes_anon_bytes=anon,
        processes_file_bytes=file,
        shmem_bytes=_meminfo_bytes("Shmem"),
        merged_bytes=merged,
        own_bytes=max(0, shadow + anon - merged),
        kernel_bytes=0 if kernel_baseline_bytes is None else kernel_bytes() - kernel_baseline_bytes,
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
