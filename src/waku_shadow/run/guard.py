"""Running Shadow under a memory guard, recording wall time, peak memory and progress (see memory.py
for how memory is measured, shadow_log.py for how Shadow's output is read)."""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import NoReturn

from waku_shadow import layout
from waku_shadow.errors import RunError
from waku_shadow.run import allocator, failures, memory, open_files, shadow_log
from waku_shadow.run.memory import MemoryBreakdown, gib
from waku_shadow.run.run_stats import RunStats

SAMPLE_INTERVAL_S = 1.0  # a sample reads every managed process's status: ~50 ms per 1000 processes


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
                match = shadow_log.PROGRESS.search(line)
                if match:
                    self.simulated_now, self.simulated_end = match["now"], match["end"]


class _PeakSampler(threading.Thread):
    """Samples the run's own memory (memory.breakdown) every SAMPLE_INTERVAL_S apart from the guard's
    loop, which must keep watching the machine's available memory while a pass over 10,000 processes
    takes ~0.5 s, and keeps the sample where it was highest: the run's peak, and where it was then.
    ``available`` is the machine's latest available memory, which the loop sets."""

    def __init__(self, shadow_pid: int, started: float, baseline_available: int, role_of_host: dict[str, str] | None):
        super().__init__(daemon=True)
        self.shadow_pid, self.started, self.role_of_host = shadow_pid, started, role_of_host
        self.baseline_available = self.available = baseline_available
        self.kernel_baseline = memory.kernel_bytes()
        self.at_peak: MemoryBreakdown | None = None
        self.done = threading.Event()

    @property
    def peak(self) -> int:
        return self.at_peak.own_bytes if self.at_peak else 0

    def run(self) -> None:
        while not self.done.is_set():
            sample = memory.breakdown(self.shadow_pid, time.monotonic() - self.started,
                                      self.baseline_available - self.available, self.role_of_host,
                                      kernel_baseline_bytes=self.kernel_baseline)
            if sample.own_bytes > self.peak:
                self.at_peak = sample
            self.done.wait(SAMPLE_INTERVAL_S)

    def stop(self) -> MemoryBreakdown | None:
        self.done.set()
        self.join(timeout=60)
        return self.at_peak


def run(
    shadow_binary: str,
    run_dir: Path,
    memory_floor_bytes: int,
    poll_interval_s: float = 0.5,
    stall_timeout_s: float | None = None,
    echo_progress: bool = True,
    merge_identical_pages: bool = False,
    attempts_log: Path | None = None,
    failures_dir: Path | None = None,
    parallelism: int | None = None,
    memory_budget_bytes: int | None = None,
    wrapper: list[str] | None = None,
    preload: str | None = None,
) -> RunStats:
    """Run Shadow on ``run_dir/shadow.yaml``; raise RunError unless it completes cleanly.

    The guard stops Shadow when the machine's available memory falls below ``memory_floor_bytes``,
    and when the run's own memory (Shadow's resident set and its processes' private memory,
    memory.MemoryBreakdown.own_bytes) passes ``memory_budget_bytes``, the budget it declared to the
    scheduler: when runs share a machine, only the one that takes more than it said is stopped. Every attempt is recorded in
    ``attempts_log``; a failed one's evidence is kept in ``failures_dir`` (see failures.keep) and
    named in the error. It also stops Shadow when the simulated time of its progress lines has not
    moved for ``stall_timeout_s`` of wall time, naming the process that used the most CPU.
    ``wrapper`` is a command Shadow runs under (a profiler), Shadow's command line appended to it.
    ``preload`` is a library Shadow's process runs with (its malloc, run/allocator.py).
    """
    found = shutil.which(shadow_binary)
    if found is None:
        raise RunError(f"Shadow binary not found or not executable: {shadow_binary}")
    # Shadow starts in the run folder, where a relative path would name another file
    shadow_binary = str(Path(found).absolute())
    if merge_identical_pages:
        memory.check_page_merging()
    shutil.rmtree(run_dir / layout.SHADOW_DATA, ignore_errors=True)

    baseline_available = memory.available_bytes()
    if baseline_available <= memory_floor_bytes:
        raise RunError(
            f"only {gib(baseline_available)} of memory is available before the run, "
            f"at or below the memory floor of {gib(memory_floor_bytes)}"
        )
    min_available = baseline_available
    role_of_host = _roles(run_dir)
    started_utc = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    started = time.monotonic()
    with (run_dir / layout.SHADOW_LOG).open("wb") as stdout:
        process = subprocess.Popen(
            [*(wrapper or []), shadow_binary, "--progress", "true",
             *(["--parallelism", str(parallelism)] if parallelism else []), layout.SHADOW_CONFIG],
            cwd=run_dir,
            stdout=stdout,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env={**os.environ, "LD_PRELOAD": preload} if preload else None,
            preexec_fn=memory.merge_identical_pages if merge_identical_pages else None,
        )
        reader = _ProgressReader(process.stderr, run_dir / layout.SHADOW_STDERR, echo_progress)
        reader.start()
        guard_tripped = over_budget = stalled = False
        simulated_seen, simulated_moved = reader.simulated_now, started
        own_peak = open_files_peak = 0
        sampler = _PeakSampler(process.pid, started, baseline_available, role_of_host)
        sampler.start()
        # Shadow runs in its own session: if we are stopped, it must not run on unguarded
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            while process.poll() is None:
                available = memory.available_bytes()
                min_available = min(min_available, available)
                sampler.available = available
                if available < memory_floor_bytes:
                    guard_tripped = True
                    _stop(process)
                    break
                now = time.monotonic()
                if reader.simulated_now != simulated_seen:
                    simulated_seen, simulated_moved = reader.simulated_now, now
                elif stall_timeout_s is not None and now - simulated_moved > stall_timeout_s:
                    stalled = True
                    busiest = memory.busiest_processes(process.pid, run_dir)
                    _stop(process)
                    break
                open_files_peak = max(open_files_peak, open_files.held(process.pid))
                own_peak = sampler.peak
                if memory_budget_bytes and own_peak > memory_budget_bytes:
                    over_budget = True
                    _stop(process)
                    break
                time.sleep(poll_interval_s)
            process.wait()
        finally:
            signal.signal(signal.SIGTERM, previous)
            if process.poll() is None:
                _stop(process)
            at_peak = sampler.stop()
            own_peak = sampler.peak
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
        failed_processes=shadow_log.failed_processes(run_dir / layout.SHADOW_LOG),
        memory_at_peak=None if at_peak is None else asdict(at_peak),
        started_utc=started_utc,
        resident_peak_bytes=own_peak or None,  # a run too short to be measured has only the machine's
        shadow_allocator=allocator.name(preload),
        shadow_open_files_peak=open_files_peak or None,
    )

    def fail(status: str, message: str) -> NoReturn:
        stats.status = status
        stats.write(run_dir, attempts_log)
        raise RunError(_where_kept(run_dir, stats, failures_dir, message))

    if stalled:
        fail("stopped: simulated time stood still",
            f"Shadow's simulated time stood still at {stats.simulated_reached} for {_wall(stall_timeout_s)} of "
            f"wall time, so the guard stopped it: a process is most likely in a loop of calls that never block, which "
            f"Shadow, charging no time for computation, cannot move its clock past ({_cpu_times(busiest)}); "
            f"shadow.model_unblocked_syscall_latency: true gives each such call a little simulated time (it changes "
            f"the timings), resources.stall_timeout sets how long the guard waits")
    if over_budget or guard_tripped or process.returncode != 0:
        stats.simulated_reached = shadow_log.latest_simulated_time(run_dir / layout.SHADOW_LOG, reader.simulated_now)
    if over_budget or guard_tripped:
        if over_budget:
            why = (f"the run took {gib(own_peak)}, more than the {gib(memory_budget_bytes)} it declared "
                   f"(the cost law x resources.cost_margin, or resources.run_memory); raise resources.run_memory, "
                   f"or refit the law (waku-shadow cost-law) if the build has changed")
        else:
            own = f", {gib(own_peak)} of it by the run itself" if own_peak else ""
            why = (f"available memory fell below the floor of {gib(memory_floor_bytes)} (the machine had lost "
                   f"{gib(stats.peak_memory_bytes)} since the run started{own}, {stats.wall_seconds:.0f} s wall); lower network.nodes or the "
                   f"message size, or lower resources.memory_floor if the machine can spare it")
        fail("stopped by memory guard",
             f"memory guard stopped Shadow at simulated time {stats.simulated_reached} of {reader.simulated_end}: {why}")
    if process.returncode != 0:
        detail = "; ".join(
            f"{f['process']}: expected {f['expected']}, was {f['actual']}" for f in stats.failed_processes[:10]
        )
        more = len(stats.failed_processes) - 10
        reason = "" if detail else shadow_log.missing_patch(run_dir / layout.SHADOW_STDERR) or shadow_log.shadow_error(run_dir / layout.SHADOW_STDERR)
        fail("failed",
            f"Shadow exited with code {process.returncode} at simulated time {stats.simulated_reached}"
            + (f"; {len(stats.failed_processes)} processes ended in an unexpected state: {detail}" if detail else "")
            + (f": {reason}" if reason else "")
            + (f" (and {more} more)" if more > 0 else ""))
    # Fast runs may finish before Shadow prints a progress line: the stop time is where they ended.
    stats.simulated_reached = stats.simulated_end = shadow_log.configured_stop_time(run_dir)
    stats.write(run_dir, attempts_log)
    return stats


def _where_kept(run_dir: Path, stats: RunStats, failures_dir: Path | None, reason: str) -> str:
    """The failure's reason, and where its evidence is: kept in ``failures_dir``, or the run folder."""
    if failures_dir is None:
        return f"{reason}; see {run_dir / layout.SHADOW_LOG}"
    return f"{reason}; Shadow's log, the failed processes' output and the attempt are kept in {failures.keep(run_dir, asdict(stats), failures_dir)}"


def _wall(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"


def _cpu_times(busiest: list[tuple[str, float]]) -> str:
    if not busiest:
        return "no process left to name"
    (host, seconds), *rest = busiest
    after = f"; the next, {rest[0][0]}, {rest[0][1]:.0f} s" if rest else ""
    return f"the busiest, {host}, had used {seconds:.0f} s of CPU{after}"


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


def _roles(run_dir: Path) -> dict[str, str] | None:
    """Each host's role (identities.csv), for the memory of each role; None for a run rendered before roles."""
    try:
        with (run_dir / layout.IDENTITIES).open(newline="") as identities:
            rows = list(csv.DictReader(identities))
    except OSError:
        return None
    return {row["host"]: row["role"] for row in rows} if rows and "role" in rows[0] else None
