"""What the container image costs and whether it gives the native runs' receipts
(scripts/prove_container.py measures it into bench/container.json; docs/running.md quotes it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.cost import bench
from waku_shadow.errors import ConfigError

RECORD = "container.json"
PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?)")


def pytest_counts(summary_line: str) -> dict[str, int]:
    """pytest's last line ("== 3 passed, 1 skipped in 5.2s ==") as counts by outcome."""
    counts = {outcome.rstrip("s") if outcome.startswith("error") else outcome: int(n)
              for n, outcome in PYTEST_COUNT.findall(summary_line)}
    if not counts:
        raise ConfigError(f"not a pytest summary line: {summary_line!r}")
    return counts


def receipts_against_native(native_study: Path, container_study: Path) -> dict:
    """Every run of the study the image ran, receipt for receipt against the same run made natively."""
    container_runs = sorted(p.parent for p in (container_study / "runs").glob(f"*/{layout.VALIDATION}"))
    if not container_runs:
        raise ConfigError(f"{container_study}: no validated run")
    compared = identical = validated = 0
    for run in container_runs:
        native = native_study / "runs" / run.name
        if not (native / layout.VALIDATION).exists():
            raise ConfigError(f"{native}: no validated native run to compare {run.name} with")
        first, second = (pd.read_parquet(r / layout.RECEIPTS) for r in (native, run))
        agreement = bench.receipt_agreement(first, second)
        compared += max(len(first), len(second))  # a receipt only one of them has is not identical
        identical += round(agreement["identical_share"] * agreement["receipts_in_both"])
        validated += 1
    return {"runs_validated": validated, "receipts_compared": compared, "receipts_identical": identical}


def write(record: dict, bench_dir: Path) -> Path:
    path = bench_dir / RECORD
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


def block(bench_dir: Path) -> str | None:
    """docs/running.md's lines on the image, from bench/container.json; None when it was never measured."""
    path = bench_dir / RECORD
    if not path.exists():
        return None
    r = json.loads(path.read_text())
    tests = r["tests"]
    test_counts = ", ".join(f"{n} {outcome}" for outcome, n in tests["counts"].items())
    return "\n".join([
        f"Measured on {r['date']} on the maintainers' 2-core machine with {r['engine']}, on nwaku {r['nwaku_tag']} "
        f"(`scripts/prove_container.py`, `bench/{RECORD}`):",
        f"- **Build:** the `Dockerfile` from scratch, every upstream source from local build contexts: "
        f"{r['build_seconds'] / 60:.0f} min{'' if r['build_alone'] else ', sharing the two cores with other work'} "
        "(Debian packages, Shadow with its patches, librln and nwaku with its patches).",
        f"- **Image:** {r['image_bytes'] / 1e9:.2f} GB (Shadow, wakunode2, Python with the workflow's packages; no compilers).",
        f"- **The default study inside it:** {r['study_seconds'] / 60:.1f} min end to end, {r['runs_validated']} runs validated, "
        f"{r['receipts_identical']} of {r['receipts_compared']} receipts identical to the nanosecond to the same study run "
        "outside the container.",
        f"- **The tests inside it:** {test_counts} in {tests['seconds'] / 60:.1f} min.",
    ])
