"""What a Shadow run recorded (run_stats.json): status, wall time, memory and how far it got."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from waku_shadow import layout

OWN_MEASURE = "own"  # RunStats.memory_measure: the run's processes' proportional set size
MACHINE_MEASURE = "machine"  # the fall of the machine's available memory (runs recorded before the own measure)


@dataclass
class RunStats:
    status: str  # "completed", "failed", "stopped by memory guard" or "stopped: simulated time stood still"
    wall_seconds: float
    peak_memory_bytes: int
    min_available_bytes: int
    memory_floor_bytes: int
    simulated_reached: str
    simulated_end: str
    shadow_exit_code: int | None
    failed_processes: list[dict]
    memory_at_peak: dict | None = None  # a MemoryBreakdown, as a dict; None in runs recorded before it
    started_utc: str | None = None  # when Shadow started, ISO 8601; None in runs recorded before it
    # the run's own peak: the proportional set size of Shadow and its processes (memory.session_pss_bytes);
    # None in runs recorded before it, whose only measure is peak_memory_bytes, the fall of the machine's
    # available memory, which counts whatever else ran beside them
    own_peak_memory_bytes: int | None = None
    shadow_allocator: str | None = None  # the malloc Shadow ran with (run/allocator.py); None in runs recorded before it
    shadow_open_files_peak: int | None = None  # the most descriptors Shadow held at once (run/open_files.py); None before

    @property
    def memory_bytes(self) -> int:
        """The run's peak memory by the best measure it recorded (memory_measure says which)."""
        return self.peak_memory_bytes if self.own_peak_memory_bytes is None else self.own_peak_memory_bytes

    @property
    def memory_measure(self) -> str:
        return MACHINE_MEASURE if self.own_peak_memory_bytes is None else OWN_MEASURE

    def write(self, run_dir: Path, attempts_log: Path | None) -> None:
        """run_stats.json, and a line in the run's log of attempts (kept when a failed job's outputs are removed)."""
        (run_dir / layout.RUN_STATS).write_text(json.dumps(asdict(self), indent=2) + "\n")
        if attempts_log is not None:
            attempts_log.parent.mkdir(parents=True, exist_ok=True)
            with attempts_log.open("a") as attempts:
                attempts.write(json.dumps(asdict(self)) + "\n")


def read_stats(run_dir: Path) -> RunStats:
    return RunStats(**json.loads((run_dir / layout.RUN_STATS).read_text()))
