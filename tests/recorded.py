"""Helpers for tests that replay the recorded real runs in tests/data/recorded/."""

import csv
import gzip
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np

from conftest import RECORDED

RUN_2KB = RECORDED / "recorded" / "n16-size2000B-seed11"
RUN_100KB = RECORDED / "recorded" / "n16-size100000B-seed11"
RUNS = [RUN_2KB, RUN_100KB]
CHURN_RUN = RECORDED / "recorded-churn" / "n16-size2000B-seed2"
SPAM_RUN = RECORDED / "recorded-spam" / "n16-size2000B-seed3"
LIGHT_RUN = RECORDED / "recorded-light" / "n12-size2000B-seed4"
LIGHT_TOPICS_RUN = RECORDED / "recorded-light-topics" / "n12-size2000B-seed4"
SHARDS_RUN = RECORDED / "recorded-shards" / "n20-size2000B-seed5"
CLASSES_RUN = RECORDED / "recorded-classes" / "n20-size20000B-seed6"
DISCV5_RUN = RECORDED / "recorded-discv5" / "n20-size2000B-seed7"
CASCADE_RUNS = [RECORDED / "recorded-cascade" / name for name in ("n5-size2000B-seed5", "n5-size500000B-seed5")]


def copy_run(run: Path, tmp_path: Path) -> Path:
    target = tmp_path / run.name
    shutil.copytree(run, target)
    return target


def parsed_copies(runs: list[Path], base: Path, validate: bool = True) -> list[Path]:
    """Copies of recorded runs, parsed (and validated) by the CLI as the workflow does it."""
    from waku_shadow import cli

    copies = [copy_run(run, base) for run in runs]
    for run in copies:
        assert cli.main(["parse", "--run-dir", str(run)]) == 0
        if validate:
            assert cli.main(["validate", "--run-dir", str(run)]) == 0
    return copies


def rewrite_log(run_dir: Path, host: str, edit) -> Path:
    """Apply ``edit(list of lines) -> list of lines`` to a host's gzipped nwaku log."""
    path = run_dir / "logs" / host / "wakunode2.log.gz"
    with gzip.open(path, "rt") as handle:
        lines = handle.readlines()
    with gzip.open(path, "wt") as handle:
        handle.writelines(edit(lines))
    return path


def raw_records(run_dir: Path, message: str) -> list[tuple[str, dict]]:
    """(host, record) of every nwaku log line of a run whose "msg" is ``message``, read with gzip and json
    alone: an oracle for the parser. nwaku v0.37.1-beta writes "ts" unquoted; it is quoted first."""
    records = []
    for log in sorted((run_dir / "logs").glob("*/wakunode2.log.gz")):
        with gzip.open(log, "rt") as handle:
            records += [(log.parent.name, json.loads(re.sub(r'"ts":([^",]+),', r'"ts":"\1",', line, count=1)))
                        for line in handle if f'"msg":"{message}"' in line]
    return records


def raw_latencies_ms(run_dir: Path, measured_only: bool = False) -> dict[tuple[str, str], float]:
    """(msg_hash, receiver) -> latency (ms) of every receipt in a run's raw logs: the receiver's receivedTime
    less the publisher's intentTime; without the warm-up messages if ``measured_only``."""
    with open(run_dir / "schedule.csv") as handle:
        warmup = {row["msg_hash"] for row in csv.DictReader(handle) if row["warmup"] == "True"}
    intent = {record["msg_hash"]: record["intentTime"] for _, record in raw_records(run_dir, "publish intent")}
    return {(r["msg_hash"], host): (r["receivedTime"] - intent[r["msg_hash"]]) / 1e6
            for host, r in raw_records(run_dir, "received relay message")
            if r["from_peer_id"] != "rest" and not (measured_only and r["msg_hash"] in warmup)}


def raw_first_hops(run_dir: Path) -> dict[str, tuple[int, int]]:
    """msg_hash -> (copies its publisher sent, receipts straight from its publisher), from a run's raw logs."""
    with open(run_dir / "schedule.csv") as handle:
        publisher = {row["msg_hash"]: row["publisher"] for row in csv.DictReader(handle)}
    with open(run_dir / "identities.csv") as handle:
        short_id = {row["host"]: row["short_peer_id"] for row in csv.DictReader(handle)}
    sent = Counter(r["msg_hash"] for host, r in raw_records(run_dir, "sent relay message") if host == publisher[r["msg_hash"]])
    direct = Counter(r["msg_hash"] for _, r in raw_records(run_dir, "received relay message")
                     if r["from_peer_id"] == short_id[publisher[r["msg_hash"]]])
    return {msg_hash: (sent[msg_hash], direct[msg_hash]) for msg_hash in publisher}


def ecdf_distances(ours: np.ndarray, theirs: np.ndarray) -> tuple[float, float]:
    """KS (largest gap) and Wasserstein (area between) of two ECDFs, evaluated on the pooled values."""
    grid = np.sort(np.concatenate([ours, theirs]))
    gap = np.abs(np.searchsorted(np.sort(ours), grid, side="right") / len(ours)
                 - np.searchsorted(np.sort(theirs), grid, side="right") / len(theirs))
    return gap.max(), float(np.sum(gap[:-1] * np.diff(grid)))
