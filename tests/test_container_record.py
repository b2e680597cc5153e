"""The image's measured cost (cost/container.py, bench/container.json): pytest's counts, the receipts of
the study the image ran against the native ones, and the lines docs/running.md quotes."""

import shutil

import pandas as pd
import pytest
from recorded import RUN_2KB, parsed_copies

from waku_shadow import layout
from waku_shadow.cost import container
from waku_shadow.errors import ConfigError


def test_pytests_last_line_is_counted_by_outcome():
    assert container.pytest_counts("778 passed, 22 skipped in 531.20s (0:08:51)") == {"passed": 778, "skipped": 22}
    assert container.pytest_counts("== 1 failed, 3 passed, 2 errors in 5.0s ==") == {"failed": 1, "passed": 3, "error": 2}
    with pytest.raises(ConfigError, match="not a pytest summary line"):
        container.pytest_counts("Killed")


def test_the_image_s_receipts_are_compared_run_by_run_with_the_native_ones(tmp_path):
    (native_run,) = parsed_copies([RUN_2KB], tmp_path / "native" / "default" / "runs")
    image_run = tmp_path / "image" / "default" / "runs" / native_run.name
    shutil.copytree(native_run, image_run)
    native = tmp_path / "native" / "default"
    same = container.receipts_against_native(native, image_run.parent.parent)
    receipts = len(pd.read_parquet(native_run / layout.RECEIPTS))
    assert same == {"runs_validated": 1, "receipts_compared": receipts, "receipts_identical": receipts}
    moved = pd.read_parquet(image_run / layout.RECEIPTS)
    moved.loc[1, "received_ns"] += 1
    moved.iloc[1:].to_parquet(image_run / layout.RECEIPTS)  # one receipt later, one missing
    assert container.receipts_against_native(native, image_run.parent.parent)["receipts_identical"] == receipts - 2
    shutil.rmtree(native_run)
    with pytest.raises(ConfigError, match="no validated native run to compare"):
        container.receipts_against_native(native, image_run.parent.parent)


def test_the_running_page_quotes_the_record(tmp_path):
    assert container.block(tmp_path) is None
    container.write({"date": "2026-11-29", "engine": "podman version 4.3.1", "nwaku_tag": "v0.38.1", "build_seconds": 1500, "build_alone": True,
                     "image_bytes": 1_620_000_000, "study_seconds": 150, "runs_validated": 4, "receipts_compared": 2352,
                     "receipts_identical": 2352, "tests": {"counts": {"passed": 800, "skipped": 30}, "seconds": 400}}, tmp_path)
    lines = container.block(tmp_path).splitlines()
    assert lines[0].startswith("Measured on 2026-11-29 on the maintainers' 2-core machine with podman version 4.3.1, on nwaku v0.38.1")
    assert "25 min" in lines[1] and "1.62 GB" in lines[2]
    assert "2.5 min end to end, 4 runs validated, 2352 of 2352 receipts identical" in lines[3]
    assert lines[4].endswith("800 passed, 30 skipped in 6.7 min.")
