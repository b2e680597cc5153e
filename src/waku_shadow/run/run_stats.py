"""What a Shadow run recorded (run_stats.json): status, wall time, memory and how far it got."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from waku_shadow import layout

RESIDENT_MEASURE = "resident"  # RunStats.memory_measure: Shadow's resident set and its processes' private memory
OWN_MEASURE = "own"  # the proportional set size of Shadow and its processes, sampled minutes apart (runs before 2026-12-08)
MACHINE_MEASURE = "machine"  # the fall of the machine's available memory (runs recorded before either)


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
    # the proportional set size of Shadow and its processes, sampled minutes apart by a pass over every node's
    # smaps_rollup, so it could miss the moment all nodes were alive; only in runs recorded before 2026-12-08
    own_peak_memory_bytes: int | None = None
    shadow_allocator: str | None = None  # the malloc Shadow ran with (run/allocator.py); None in runs recorded before it
    shadow_open_files_peak: int | None = None  # the most descriptors Shadow held at once (run/open_files.py); None before
    # the run's own peak, sampled every second: Shadow's resident set and its processes' private memory
    # (memory.MemoryBreakdown.own_bytes; memory_at_peak is that sample); None in runs recorded before it
    resident_peak_bytes: int | None = None

    @property
    def memory_bytes(self) -> int:
        """The run's peak memory by the best measure it recorded (memory_measure says which)."""
        return self._best_measure()[1]

    @property
    def memory_measure(self) -> str:
        return self._best_measure()[0]

    def _best_measure(self) -> tuple[str, int]:
        for measure, value in ((RESIDENT_MEASURE, self.resident_peak_bytes), (OWN_MEASURE, self.own_peak_memory_bytes)):
            if value is not None:
                return measure, value
        return MACHINE_MEASURE, self.peak_memory_bytes

    def write(self, run_dir: Path, attempts_log: Path | None) -> None:
        """run_stats.json, and a line in the run's log of attempts (kept when a failed job's outputs are removed)."""
        (run_dir / layout.RUN_STATS).write_text(json.dumps(asdict(self), indent=2) + "\n")
        if attempts_log is not None:
            attempts_log.parent.mkdir(parents=True, exist_ok=True)
            with attempts_log.open("a") as attempts:
                attempts.write(json.dumps(asdict(self)) + "\n")


def read_stats(run_dir: Path) -> RunStats:
    return RunStats(**json.loads((run_dir / layout.RUN_STATS).read_text()))
