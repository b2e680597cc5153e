"""Benchmarks: what one run costs (wall time, memory, simulation speed, log volume), and ratios of two.

A benchmark runs a study's workflow for one message size into its own results folder
and measures the run it leaves. Peak memory is the runner's system-wide figure: the
largest fall of MemAvailable during the run, counting Shadow, every nwaku process and
their shared memory once.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats
import yaml

from waku_shadow import checkout, layout
from waku_shadow.analyse import bandwidth, stats
from waku_shadow.configuration import loader, units
from waku_shadow.configuration.study import merge
from waku_shadow.errors import RunError
from waku_shadow.run import memory, shadow_log
from waku_shadow.run.run_stats import RunStats, read_stats
from waku_shadow.stack import builds

GIB = 1024**3
MIB = 1024**2
RESULTS_TABLE = "results.csv"
COMPARED = [
    "wall_s", "peak_memory_gib", "node_seconds_per_wall_second", "mib_per_node",
    "shadow_mib_per_node", "process_private_mib_per_node", "shmem_mib_per_node", "merged_mib_per_node", "log_mib",
]


def gzip_sizes(directory: Path) -> tuple[int, int]:
    """(uncompressed, compressed) bytes of every .gz file below ``directory``.

    The uncompressed size is read from each file's gzip trailer (ISIZE, the size modulo
    2^32), so nothing is decompressed; no single log comes near 4 GiB.
    """
    raw = packed = 0
    for path in directory.rglob("*.gz"):
        size = path.stat().st_size
        packed += size
        with path.open("rb") as handle:
            handle.seek(size - 4)
            raw += struct.unpack("<I", handle.read(4))[0]
    return raw, packed


def measure(run_dir: Path, label: str) -> dict:
    """The cost of one finished (or stopped) run, from the files the workflow left in ``run_dir``."""
    study = loader.load(run_dir / layout.RUN_CONFIG)
    stats = _latest_stats(run_dir)
    completed = stats.status == "completed"
    simulated_s = (study.stop_time_ns if completed else shadow_log.parse_clock(stats.simulated_reached)) / 1e9
    validation = run_dir / layout.VALIDATION
    raw, packed = gzip_sizes(run_dir / layout.LOGS) if (run_dir / layout.LOGS).is_dir() else (0, 0)
    wall = stats.wall_seconds
    breakdown = stats.memory_at_peak

    def per_node(field: str) -> float:
        # merged_bytes was added to the breakdown later: a breakdown without it merged nothing
        return breakdown.get(field, 0) / MIB / study.nodes if breakdown else float("nan")

    return {
        "label": label,
        "study": study.name,
        "run": run_dir.name,
        "nodes": study.nodes,
        "size_bytes": study.message_sizes[0],
        "status": stats.status,
        "validated": validation.exists() and json.loads(validation.read_text())["passed"],
        "wall_s": wall,
        "peak_memory_gib": stats.memory_bytes / GIB,
        "memory_measure": stats.memory_measure,
        "simulated_s": simulated_s,
        "node_seconds_per_wall_second": study.nodes * simulated_s / wall,
        "mib_per_node": stats.memory_bytes / MIB / study.nodes,
        # where the memory was at the breakdown sample nearest the peak (see memory.MemoryBreakdown)
        "shadow_mib_per_node": per_node("shadow_rss_bytes"),
        "process_private_mib_per_node": per_node("processes_anon_bytes"),
        "shmem_mib_per_node": per_node("shmem_bytes"),
        # what merging identical pages saved (resources.merge_identical_pages); private memory counts merged pages in full
        "merged_mib_per_node": per_node("merged_bytes"),
        "log_mib": raw / MIB,
        "log_mib_gz": packed / MIB,
    }


def _latest_stats(run_dir: Path) -> RunStats:
    """run_stats.json, or for a run the guard stopped (whose outputs Snakemake removed) its last attempt."""
    stats = run_dir / layout.RUN_STATS
    if stats.exists():
        return read_stats(run_dir)
    attempts = layout.attempts(layout.study_dir_of(run_dir), run_dir.name)
    if attempts.exists():
        return RunStats(**json.loads(attempts.read_text().splitlines()[-1]))
    raise RunError(f"{run_dir}: no run_stats.json and no simulation attempt: did the run start?")


def ratios(rows: list[dict]) -> dict[str, float]:
    """Each compared measure of the second row divided by the first's."""
    first, second = rows
    return {key: second[key] / first[key] if first[key] else float("nan") for key in COMPARED}


def config_files(side: str) -> list[Path]:
    """One side of a benchmark: a study config, or several joined by '+' (later ones override)."""
    return [Path(part).resolve() for part in side.split("+")]


def compare_receipts(first_run: Path, second_run: Path) -> dict:
    """How far the second run's receipts are from the first's, receipt by receipt (same seed, same schedule).

    With nwaku patch 0005 two runs of one config deliver every receipt from the same parent and
    97 % of them at the same nanosecond, the rest within about 1 µs (without it: 43 % and
    85-91 %); a cut is judged against that spread, by benchmarking a config against itself too.
    """
    first = pd.read_parquet(first_run / layout.RECEIPTS)
    second = pd.read_parquet(second_run / layout.RECEIPTS)
    # two builds give different receipts; whether their latencies differ beyond chance is the test's p-value
    distance = scipy.stats.ks_2samp(stats.measured(first)["latency_ms"], stats.measured(second)["latency_ms"])
    return {
        "receipts_first": len(first),
        "receipts_second": len(second),
        **receipt_agreement(first, second),
        "mean_latency_ms": [float(first["latency_ms"].mean()), float(second["latency_ms"].mean())],
        "latency_ks": float(distance.statistic),
        "latency_ks_pvalue": float(distance.pvalue),
        "copies_sent": [len(pd.read_parquet(run / layout.SENDS)) for run in (first_run, second_run)],
        "bytes_per_message": [bytes_per_message(run) for run in (first_run, second_run)],
    }


def receipt_agreement(first: pd.DataFrame, second: pd.DataFrame) -> dict:
    """The receipts (a message at a receiver) two runs both have: how many, the share at the same
    nanosecond, the share from the same parent, and how far apart the others are."""
    both = first.merge(second, on=["msg_hash", "receiver"], suffixes=("_first", "_second"))
    difference = (both["received_ns_second"] - both["received_ns_first"]).abs() / 1e6
    return {
        "receipts_in_both": len(both),
        "identical_share": float((difference == 0).mean()),
        "same_parent_share": float((both["from_host_first"] == both["from_host_second"]).mean()),
        "median_abs_difference_ms": float(difference.median()),
        "max_abs_difference_ms": float(difference.max()),
    }


def bytes_per_message(run_dir: Path) -> float | None:
    """The bytes all nodes sent and received per message (bandwidth.run_cost), for a run with a
    packet capture (shadow.traffic_capture); None for one without."""
    if not (run_dir / layout.AMPLIFICATION).exists():
        return None
    return bandwidth.run_cost(run_dir, loader.load(run_dir / layout.RUN_CONFIG))["net_bytes_per_message"]


def workflow_command(
    files: list[Path], size: str, results_dir: Path, cores: int, nodes: int | None = None
) -> tuple[list[str], Path]:
    """Snakemake up to one validated run of the config ``files`` at ``size`` (and ``nodes``, when
    given) into ``results_dir``, and the run's folder."""
    size_bytes = units.size_bytes(size, "--size")
    overrides = {"traffic": {"message_sizes": [f"{size_bytes} B"]}}
    if nodes is not None:
        overrides["network"] = {"nodes": nodes}
    raw: dict = {}
    for path in files:
        raw = merge(raw, loader.read_yaml(path))
    study = loader.resolve(merge(raw, overrides), source=" + ".join(map(str, files)))
    run_dir = results_dir / study.name / "runs" / study.runs()[0].run_id
    # a config file keeps the overrides' types; Snakemake's --config turns nested numbers into text
    results_dir.mkdir(parents=True, exist_ok=True)
    overrides_file = results_dir / "bench-overrides.yaml"
    overrides_file.write_text(yaml.safe_dump({**overrides, "resources": {"results_dir": str(results_dir)}}))
    # with a packet capture, the traffic rule too: the bytes each message cost
    targets = [run_dir / layout.VALIDATION] + ([run_dir / layout.AMPLIFICATION] if study.traffic_capture else [])
    command = [
        sys.executable, "-m", "snakemake", "--cores", str(cores), *map(str, targets),
        "--configfile", *map(str, files), str(overrides_file),
    ]
    return command, run_dir


def run(sides: list[str], size: str, out: Path, cores: int, nodes: int | None = None) -> tuple[list[dict], dict | None]:
    """Run every side at ``size`` one after the other, measure each, record and return the rows
    (and for two validated runs, how their receipts compare).

    A run that fails (the memory guard, a crashed node) is still measured and recorded
    with its status.
    """
    out = out.resolve()
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    rows, run_dirs = [], []
    for index, side in enumerate(sides):
        files = config_files(side)
        command, run_dir = workflow_command(files, size, out / "runs" / f"{stamp}-{index}", cores, nodes)
        done = subprocess.run(command, cwd=checkout.root(), check=False)
        if done.returncode != 0 and not (run_dir / layout.RUN_CONFIG).exists():
            raise RunError(f"{side}: the workflow stopped before the run was rendered (exit {done.returncode}); see its output above")
        row = measure(run_dir, label="+".join(f.stem for f in files))
        row.update(
            {
                "config": side,
                "started_utc": stamp,
                "waku_shadow": builds.project_version(),
                "cores": os.cpu_count(),
                "memory_gib": memory.total_bytes() / GIB,
            }
        )
        rows.append(row)
        run_dirs.append(run_dir)
    receipts = None
    if len(rows) == 2 and all(row["validated"] for row in rows):
        receipts = compare_receipts(*run_dirs)
    record(rows, out, stamp, receipts)
    return rows, receipts


def record(rows: list[dict], out: Path, stamp: str, receipts: dict | None = None) -> Path:
    """Write the rows (and for a pair, the ratios and the receipt comparison) as JSON and
    append the rows to ``out/results.csv``."""
    out.mkdir(parents=True, exist_ok=True)
    document = {"rows": rows}
    if len(rows) == 2:
        document["ratios_second_over_first"] = ratios(rows)
    if receipts is not None:
        document["receipts_second_against_first"] = receipts
    path = out / f"{stamp}-{'-vs-'.join(r['label'] for r in rows)}.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    table = out / RESULTS_TABLE
    frame = pd.DataFrame(rows)
    if table.exists():  # rewritten, not appended: rows recorded before a measure was added keep it empty
        frame = pd.concat([pd.read_csv(table), frame], ignore_index=True)
    frame.to_csv(table, index=False, float_format="%.4g")
    return path


def to_text(rows: list[dict], receipts: dict | None = None) -> str:
    frame = pd.DataFrame(rows).set_index("label")[["status", "nodes", "size_bytes", "simulated_s", *COMPARED]]
    text = frame.round(3).to_string()
    if len(rows) == 2:
        text += "\n\nsecond / first: " + ", ".join(f"{k} {v:.3f}" for k, v in ratios(rows).items())
    if receipts is not None:
        text += (
            f"\nreceipts: {receipts['identical_share']:.1%} identical, {receipts['same_parent_share']:.1%} from the "
            f"same parent, median |difference| {receipts['median_abs_difference_ms']:.3f} ms, "
            f"max {receipts['max_abs_difference_ms']:.1f} ms"
            f"\nlatency (measured messages): KS {receipts['latency_ks']:.3f}, p {receipts['latency_ks_pvalue']:.2g} "
            f"({'the same distribution, within chance' if receipts['latency_ks_pvalue'] >= 0.01 else 'a different distribution'}), "
            f"mean {receipts['mean_latency_ms'][0]:.1f} -> {receipts['mean_latency_ms'][1]:.1f} ms"
            f"\ncopies sent: {receipts['copies_sent'][0]} -> {receipts['copies_sent'][1]}"
        )
        sent = receipts["bytes_per_message"]
        text += (f"\nbytes on the wire per message: {sent[0] / 1e6:.2f} -> {sent[1] / 1e6:.2f} MB" if None not in sent
                 else "\nbytes on the wire: not measured (a run without shadow.traffic_capture)")
    return text


SCALING_COLUMNS = ["status", "wall_s", "peak_memory_gib", "simulated_s", "node_seconds_per_wall_second", "mib_per_node"]


def _runs_against(results: pd.DataFrame, label: str, fixed: str, value: int, varied: str) -> pd.DataFrame:
    """The runs of one benchmark label with ``fixed`` at ``value``, one per value of ``varied`` (the latest)."""
    runs = results[(results["label"] == label) & (results[fixed] == value)]
    return runs.sort_values(varied, kind="stable").drop_duplicates(varied, keep="last")[[varied, *SCALING_COLUMNS]]


def scaling(results: pd.DataFrame, label: str, size_bytes: int) -> tuple[pd.DataFrame, dict]:
    """The runs of one benchmark label (config) and size against N, and the laws fitted to the completed ones.

    Wall time is fitted as a N^b (least squares on logs); peak memory as c + d N. Runs
    the memory guard stopped stay in the table. Of repeated runs at one N the latest counts.
    """
    runs = _runs_against(results, label, "size_bytes", size_bytes, "nodes")
    done = runs[runs["status"] == "completed"]
    if done["nodes"].nunique() < 2:
        raise RunError(f"scaling needs completed runs of {label} at {size_bytes} B with at least two values of N")
    wall = stats.fit_line(np.log(done["nodes"]), np.log(done["wall_s"]))
    exponent, log_a = wall["slope"], wall["intercept"]
    memory_fit = stats.fit_line(done["nodes"], done["peak_memory_gib"])
    per_node_gib, base_gib = memory_fit["slope"], memory_fit["intercept"]
    law = {
        "against": "nodes",
        "wall_s": f"{np.exp(log_a):.4g} x N^{exponent:.3f}",
        "wall_exponent": float(exponent),
        "wall_coefficient_s": float(np.exp(log_a)),
        "peak_memory_gib": f"{base_gib:.3g} + {per_node_gib * 1024:.3g} MiB x N",
        "memory_base_gib": float(base_gib),
        "memory_per_node_mib": float(per_node_gib * 1024),
    }
    return runs, law


def size_scaling(results: pd.DataFrame, label: str, nodes: int) -> tuple[pd.DataFrame, dict]:
    """The runs of one benchmark label at ``nodes`` against message size, and lines fitted to the completed ones.

    Wall time and peak memory are each fitted as a + b x size (in KB). Runs the memory guard
    stopped stay in the table with what they had taken when stopped.
    """
    runs = _runs_against(results, label, "nodes", nodes, "size_bytes")
    done = runs[runs["status"] == "completed"]
    if done["size_bytes"].nunique() < 2:
        raise RunError(f"size scaling needs completed runs of {label} at N = {nodes} with at least two message sizes")
    kb = done["size_bytes"] / 1000
    wall, memory_fit = stats.fit_line(kb, done["wall_s"]), stats.fit_line(kb, done["peak_memory_gib"])
    wall_per_kb, wall_base = wall["slope"], wall["intercept"]
    memory_per_kb, memory_base = memory_fit["slope"], memory_fit["intercept"]
    law = {
        "against": "size_bytes",
        "wall_s": f"{wall_base:.4g} s + {wall_per_kb:.3g} s x KB",
        "wall_base_s": float(wall_base),
        "wall_per_kb_s": float(wall_per_kb),
        "peak_memory_gib": f"{memory_base:.3g} GiB + {memory_per_kb * 1024:.3g} MiB x KB",
        "memory_base_gib": float(memory_base),
        "memory_per_kb_mib": float(memory_per_kb * 1024),
    }
    return runs, law


def predict(law: dict, value: int) -> dict:
    """What a law of ``scaling`` (value: N) or ``size_scaling`` (value: message size in bytes) predicts."""
    if law["against"] == "nodes":
        wall = law["wall_coefficient_s"] * value ** law["wall_exponent"]
        peak_gib = law["memory_base_gib"] + law["memory_per_node_mib"] * value / 1024
    else:
        wall = law["wall_base_s"] + law["wall_per_kb_s"] * value / 1000
        peak_gib = law["memory_base_gib"] + law["memory_per_kb_mib"] * value / 1000 / 1024
    return {law["against"]: value, "wall_s": wall, "peak_memory_gib": peak_gib}


def fitted_curve(law: dict, runs: pd.DataFrame, points: int = 100) -> pd.DataFrame:
    """The law's predictions from the smallest run to 10 % beyond the largest, for a figure."""
    values = runs[law["against"]]
    return pd.DataFrame([predict(law, value) for value in np.linspace(values.min(), values.max() * 1.1, points)])
