"""Helpers for tests that replay the recorded real runs in tests/data/recorded/."""

import gzip
import shutil
from pathlib import Path

from conftest import RECORDED

RUN_2KB = RECORDED / "recorded" / "n16-size2000B-seed11"
RUN_100KB = RECORDED / "recorded" / "n16-size100000B-seed11"
RUNS = [RUN_2KB, RUN_100KB]


def copy_run(run: Path, tmp_path: Path) -> Path:
    target = tmp_path / run.name
    shutil.copytree(run, target)
    return target


def rewrite_log(run_dir: Path, host: str, edit) -> Path:
    """Apply ``edit(list of lines) -> list of lines`` to a host's gzipped nwaku log."""
    path = run_dir / "logs" / host / "wakunode2.log.gz"
    with gzip.open(path, "rt") as handle:
        lines = handle.readlines()
    with gzip.open(path, "wt") as handle:
        handle.writelines(edit(lines))
    return path
