"""What a failed simulation leaves behind, kept where no rerun removes it.

Snakemake removes a failed job's outputs and the next render empties the run folder, so
the evidence of a failed run is copied out of it when Shadow fails: Shadow's log and its
progress, the attempt's record, and the output of every process that ended in an
unexpected state (its host's stdout, stderr and shim log), all gzipped.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import shutil
from pathlib import Path

from waku_shadow import layout

HOSTS = "hosts"


def keep(run_dir: Path, stats: dict, failures_dir: Path) -> Path:
    """Copy the evidence of a failed attempt (``stats``: its RunStats as a dict) to
    ``failures_dir/<UTC time>/``; return that folder."""
    kept = failures_dir / dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    kept.mkdir(parents=True, exist_ok=True)
    (kept / layout.RUN_STATS).write_text(json.dumps(stats, indent=2) + "\n")
    for name in (layout.SHADOW_LOG, layout.SHADOW_STDERR, layout.SHADOW_CONFIG):
        _gzip_copy(run_dir / name, kept / f"{name}.gz")
    hosts_dir = run_dir / layout.SHADOW_DATA / HOSTS
    for failed in stats["failed_processes"]:
        host, program = failed["process"].split(".", 1)  # Shadow names it <host>.<program>.<pid>
        for output in sorted((hosts_dir / host).glob(f"{program}.*")):
            _gzip_copy(output, kept / HOSTS / host / f"{output.name}.gz")
    return kept


def _gzip_copy(source: Path, target: Path) -> None:
    if not source.is_file():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    with source.open("rb") as src, gzip.open(target, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
