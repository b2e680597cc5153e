"""Running Shadow under a memory guard, recording wall time, peak memory and progress.

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
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path


from .errors import RunError
from . import failures, layout, shadow_config
from .shadow_config import PATCHED_SHADOW_OPTIONS
from .units import duration_ns

GIB = 1024**3
PROGRESS = re.compile(r"simulated: (?P<now>[\d:.]+)/(?P<end>[\d:.]+)")
HEARTBEAT = re.compile(rb"at simtime (\d+)")  # Shadow's per-second resource usage lines
LOG_SIMTIME = re.compile(rb"^\S+ \[[^\]]+\] (\d+:\d\d:\d\d\.\d+) ", re.M)  # a host's log line: wall, thread, sim time
FAILED_PROCESS = re.compile(
    r"process '(?P<process>[^']+)' exited with status (?P<status>[^;]+); "
    r"expected end state was (?P<expected>.+?) but was (?P<actual>.+)$"
)
UNKNOWN_OPTION = re.compile(r"unknown field `(?P<option>\w+)`")  # how Shadow refuses a config key it lacks
BREAKDOWN_INTERVAL_S = 5.0  # reading every managed process's status costs ~50 ms per 1000 processes
KSM = Path("/sys/kernel/mm/ksm")
PR_SET_MEMORY_MERGE, PR_GET_MEMORY_MERGE = 67, 68
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class RunStats:
    status: str  # "completed", "failed" or "stopped by memory guard"
    wall_seconds: float
    peak_memory_bytes: int
    min_available_bytes: int
    memory_floor_bytes: int
    simulated_reached: str
    simulated_end: str
    shadow_exit_code: int | None
    failed_processes: list[dict]
    memory_at_peak: dict | None = None  # a MemoryBreakdown, as a dict; None in runs recorded before it

    def write(self, run_dir: Path, attempts_log: Path | None) -> None:
        """run_stats.json, and a line in the run's log of attempts (kept when a failed job's outputs are removed)."""
        (run_dir / layout.RUN_STATS).write_text(json.dumps(asdict(self), indent=2) + "\n")
        if attempts_log is not None:
            attempts_log.parent.mkdir(parents=True, exist_ok=True)
            with attempts_log.open("a") as attempts:
                attempts.write(json.dumps(asdict(self)) + "\n")


def read_stats(run_dir: Path) -> RunStats:
    return RunStats(**json.loads((run_dir / layout.RUN_STATS).read_text()))


def _meminfo_bytes(field: str) -> int:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    raise RunError(f"cannot read {field} from /proc/meminfo")


def mem_available_bytes() -> int:
    return _meminfo_bytes("MemAvailable")


def mem_total_bytes() -> int:
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


def _status_fields(pid: int | str) -> dict[str, int]:
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "RssShmem"):
                fields[key] = int(value.split()[0]) * 1024
    return fields


def _session_members(session: int) -> list[int]:
    """Every process in ``session`` (Shadow's own, which it shares with the processes it manages)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                # the fields after the parenthesised command: state ppid pgrp session ...
                after_command = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(after_command[3]) == session:
            members.append(int(entry.name))
    return members


def session_pss_bytes(session: int) -> int:
    """The proportional set size of every process in the session: each shared page (Shadow's shared
    memory with its processes, merged pages, the page cache) counted once over all who map it."""
    total = 0
    for pid in _session_members(session):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:  # exited between listing and reading
            continue
    return total


def memory_breakdown(shadow_pid: int, wall_seconds: float, taken_bytes: int) -> MemoryBreakdown:
    shadow = anon = file = count = 0
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
    return MemoryBreakdown(
        wall_seconds=round(wall_seconds, 1),
        taken_bytes=taken_bytes,
        shadow_rss_bytes=shadow,
        processes=count,
        processes_anon_bytes=anon,
        processes_file_bytes=file,
        shmem_bytes=_meminfo_bytes("Shmem"),
        merged_bytes=_ksm_pages("pages_sharing") * PAGE_SIZE,
    )


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


def _merge_identical_pages() -> None:
    """In Shadow's process before it starts: its pages and its children's may be merged."""
    if _libc.prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) < 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_MEMORY_MERGE)")


def _gib(n: int) -> str:
    return f"{n / GIB:.1f} GiB"


class _ProgressReader(threading.Thread):
    """Copies Shadow's stderr to a file and our stderr, remembering the latest simulated time."""

    def __init__(self, stream, sink: Path, echo: bool):
        super().__init__(daemon=True)
        self.stream, self.sink, self.echo = stream, sink, echo
        self.simulated_now, self.simulated_end = "00:00:00.000", "?"

    def run(self) -> None:
        with self.sink.open("w") as out:
            for raw in iter(self.stream.readline, b""):
                line = raw.decode(errors="replace")
                out.write(line)
                out.flush()
                if self.echo:
                    sys.stderr.write(line)
                match = PROGRESS.search(line)
                if match:
                    self.simulated_now, self.simulated_end = match["now"], match["end"]


def _clock(ns: int) -> str:
    seconds, rest = divmod(ns, 1_000_000_000)
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}:{seconds:02d}.{rest // 1_000_000:03d}"


def parse_clock(text: str) -> int:
    hours, minutes, seconds = text.split(":")
    return round((int(hours) * 3600 + int(minutes) * 60 + float(seconds)) * 1e9)


def latest_simulated_time(shadow_log: Path, progress: str) -> str:
    """The latest simulated time in Shadow's last progress line or the end of its log."""
    latest = parse_clock(progress)
    try:
        with shadow_log.open("rb") as log:
            log.seek(max(0, log.seek(0, 2) - 65536))
            tail = log.read()
    except OSError:
        tail = b""
    for beat in HEARTBEAT.findall(tail):
        latest = max(latest, int(beat))
    for stamp in LOG_SIMTIME.findall(tail):
        latest = max(latest, parse_clock(stamp.decode()))
    return _clock(latest)


def configured_stop_time(run_dir: Path) -> str:
    stop_time = shadow_config.read(run_dir)["general"]["stop_time"]
    return _clock(duration_ns(stop_time, "general.stop_time"))


def shadow_error(shadow_stderr: Path) -> str:
    """Shadow's own account of why it stopped: its "Error:" lines up to the backtrace."""
    if not shadow_stderr.exists():
        return ""
    reasons = []
    for line in shadow_stderr.read_text(errors="replace").splitlines():
        if not line.startswith("Error:"):
            continue
        text = line.removeprefix("Error:").strip()
        if text.startswith("Stack backtrace"):
            break
        if text and text != "Caused by:" and not text.startswith("process '"):
            reasons.append(text)
    return " ".join(reasons)


def missing_patch(shadow_stderr: Path) -> str:
    """Why Shadow refused an option of a patched Shadow, naming the study key and the patch; "" otherwise."""
    if not shadow_stderr.exists():
        return ""
    for match in UNKNOWN_OPTION.finditer(shadow_stderr.read_text(errors="replace")):
        if match["option"] in PATCHED_SHADOW_OPTIONS:
            key, patch = PATCHED_SHADOW_OPTIONS[match["option"]]
            return (
                f"{key}: true needs a Shadow built with {patch}, and this Shadow does not know its option "
                f"experimental.{match['option']}; let the workflow build Shadow (stack.shadow.binary: null) "
                f"or point stack.shadow.binary at a Shadow built with the patch"
            )
    return ""


def failed_processes(shadow_log: Path) -> list[dict]:
    found = []
    if shadow_log.exists():
        with shadow_log.open(errors="replace") as log:
            for line in log:
                match = FAILED_PROCESS.search(line.rstrip())
                if match:
                    found.append(match.groupdict())
    return found


def run(
    shadow_binary: str,
    run_dir: Path,
    memory_floor_bytes: int,
    poll_interval_s: float = 0.5,
    echo_progress: bool = True,
    merge_identical_pages: bool = False,
    attempts_log: Path | None = None,
    failures_dir: Path | None = None,
    parallelism: int | None = None,
    memory_budget_bytes: int | None = None,
) -> RunStats:
    """Run Shadow on ``run_dir/shadow.yaml``; raise RunError unless it completes cleanly.

    The guard stops Shadow when the machine's available memory falls below ``memory_floor_bytes``,
    and when the run's own memory (the proportional share of every page Shadow and its processes
    map) passes ``memory_budget_bytes``, the budget it declared to the scheduler: when runs share
    a machine, only the one that takes more than it said is stopped. Every attempt is recorded in
    ``attempts_log``; a failed one's evidence is kept in ``failures_dir`` (see failures.keep) and
    named in the error.
    """
    found = shutil.which(shadow_binary)
    if found is None:
        raise RunError(f"Shadow binary not found or not executable: {shadow_binary}")
    # Shadow starts in the run folder, where a relative path would name another file
    shadow_binary = str(Path(found).absolute())
    if merge_identical_pages:
        check_page_merging()
    shutil.rmtree(run_dir / layout.SHADOW_DATA, ignore_errors=True)

    baseline_available = mem_available_bytes()
    if baseline_available <= memory_floor_bytes:
        raise RunError(
            f"only {_gib(baseline_available)} of memory is available before the run, "
            f"at or below the memory floor of {_gib(memory_floor_bytes)}"
        )
    min_available = baseline_available
    started = time.monotonic()
    with (run_dir / layout.SHADOW_LOG).open("wb") as stdout:
        process = subprocess.Popen(
            [shadow_binary, "--progress", "true", *(["--parallelism", str(parallelism)] if parallelism else []),
             layout.SHADOW_CONFIG],
            cwd=run_dir,
            stdout=stdout,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_merge_identical_pages if merge_identical_pages else None,
        )
        reader = _ProgressReader(process.stderr, run_dir / layout.SHADOW_STDERR, echo_progress)
        reader.start()
        guard_tripped = over_budget = False
        own_peak = 0
        next_own_check = started + BREAKDOWN_INTERVAL_S
        at_peak: MemoryBreakdown | None = None
        next_breakdown = started + BREAKDOWN_INTERVAL_S  # nothing to break down before the nodes start
        # Shadow runs in its own session: if we are stopped, it must not run on unguarded
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            while process.poll() is None:
                available = mem_available_bytes()
                min_available = min(min_available, available)
                if available < memory_floor_bytes:
                    guard_tripped = True
                    _stop(process)
                    break
                now = time.monotonic()
                if memory_budget_bytes and now >= next_own_check:
                    own_peak = max(own_peak, session_pss_bytes(process.pid))
                    next_own_check = now + BREAKDOWN_INTERVAL_S
                    if own_peak > memory_budget_bytes:
                        over_budget = True
                        _stop(process)
                        break
                if now >= next_breakdown and (at_peak is None or available <= min_available):
                    at_peak = memory_breakdown(process.pid, now - started, baseline_available - available)
                    next_breakdown = now + BREAKDOWN_INTERVAL_S
                time.sleep(poll_interval_s)
            process.wait()
        finally:
            signal.signal(signal.SIGTERM, previous)
            if process.poll() is None:
                _stop(process)
        reader.join(timeout=10)

    stats = RunStats(
        status="completed",
        wall_seconds=round(time.monotonic() - started, 3),
        peak_memory_bytes=baseline_available - min_available,
        min_available_bytes=min_available,
        memory_floor_bytes=memory_floor_bytes,
        simulated_reached=reader.simulated_now,
        simulated_end=reader.simulated_end,
        shadow_exit_code=process.returncode,
        failed_processes=failed_processes(run_dir / layout.SHADOW_LOG),
        memory_at_peak=None if at_peak is None else asdict(at_peak),
    )
    if over_budget:
        why = (f"the run took {_gib(own_peak)}, more than the {_gib(memory_budget_bytes)} it declared "
               f"(the cost law x resources.cost_margin, or resources.run_memory); raise resources.run_memory, "
               f"or refit the law (waku-shadow cost-law) if the build has changed")
    elif guard_tripped:
        why = (f"available memory fell below the floor of {_gib(memory_floor_bytes)} (the run had taken "
               f"{_gib(stats.peak_memory_bytes)}, {stats.wall_seconds:.0f} s wall); lower network.nodes or the "
               f"message size, or lower resources.memory_floor if the machine can spare it")
    if over_budget or guard_tripped:
        stats.status = "stopped by memory guard"
        stats.simulated_reached = latest_simulated_time(run_dir / layout.SHADOW_LOG, reader.simulated_now)
        stats.write(run_dir, attempts_log)
        raise RunError(_where_kept(run_dir, stats, failures_dir,
            f"memory guard stopped Shadow at simulated time {stats.simulated_reached} of {reader.simulated_end}: {why}"
        ))
    if process.returncode != 0:
        stats.status = "failed"
        stats.simulated_reached = latest_simulated_time(run_dir / layout.SHADOW_LOG, reader.simulated_now)
        stats.write(run_dir, attempts_log)
        detail = "; ".join(
            f"{f['process']}: expected {f['expected']}, was {f['actual']}" for f in stats.failed_processes[:10]
        )
        more = len(stats.failed_processes) - 10
        reason = "" if detail else missing_patch(run_dir / layout.SHADOW_STDERR) or shadow_error(run_dir / layout.SHADOW_STDERR)
        raise RunError(_where_kept(run_dir, stats, failures_dir,
            f"Shadow exited with code {process.returncode} at simulated time {stats.simulated_reached}"
            + (f"; {len(stats.failed_processes)} processes ended in an unexpected state: {detail}" if detail else "")
            + (f": {reason}" if reason else "")
            + (f" (and {more} more)" if more > 0 else "")
        ))
    # Fast runs may finish before Shadow prints a progress line: the stop time is where they ended.
    stats.simulated_reached = stats.simulated_end = configured_stop_time(run_dir)
    stats.write(run_dir, attempts_log)
    return stats


def _where_kept(run_dir: Path, stats: RunStats, failures_dir: Path | None, reason: str) -> str:
    """The failure's reason, and where its evidence is: kept in ``failures_dir``, or the run folder."""
    if failures_dir is None:
        return f"{reason}; see {run_dir / layout.SHADOW_LOG}"
    return f"{reason}; Shadow's log, the failed processes' output and the attempt are kept in {failures.keep(run_dir, asdict(stats), failures_dir)}"


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"stopped by signal {signum}")


def _stop(process: subprocess.Popen) -> None:
    """Stop Shadow and every process it manages (they share its session)."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
