"""Validation of real recorded runs, intact and damaged."""

import json

import pandas as pd
import pytest
from recorded import RUN_2KB, RUNS, copy_run, rewrite_log

from waku_shadow import cli
from waku_shadow.errors import ValidationError
from waku_shadow.parse import node_logs
from waku_shadow.render import schedule
from waku_shadow.run import run_stats
from waku_shadow.validate import validation


def check(run_dir):
    tables = node_logs.parse_run(run_dir)
    return validation.check(
        run_dir.name,
        run_stats.read_stats(run_dir),
        list(pd.read_csv(run_dir / "identities.csv")["host"]),
        schedule.read(run_dir),
        tables["publishes"],
        tables["receipts"],
    )


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.name)
def test_recorded_runs_pass(run):
    report = check(run)
    assert report.problems == {}
    assert report.counts["receipts"] == report.counts["receipts_expected"] == 15 * 7


def test_missing_receipt_lists_receiver_and_message(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    scheduled = pd.read_csv(run / "schedule.csv")
    target = scheduled["msg_hash"][3]
    receiver = next(h for h in pd.read_csv(run / "identities.csv")["host"] if h != scheduled["publisher"][3])
    rewrite_log(run, receiver, lambda lines: [l for l in lines if not ('"received relay message"' in l and target in l)])
    report = check(run)
    assert list(report.problems) == ["receipts"]
    assert report.problems["receipts"] == (
        f"1 of 105 receipts missing (message 3: 1 receivers); first missing: {receiver} never got message 3"
    )
    with pytest.raises(ValidationError, match="receipts: 1 of 105 receipts missing"):
        validation.require(report, run)
    assert json.loads((run / "validation.failed.json").read_text())["passed"] is False
    assert not (run / "validation.json").exists()


def test_min_delivery_lets_counted_losses_pass(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    scheduled = schedule.read(run)
    target = scheduled["msg_hash"][3]
    receivers = [h for h in pd.read_csv(run / "identities.csv")["host"] if h != scheduled["publisher"][3]][:5]
    for receiver in receivers:
        rewrite_log(run, receiver, lambda lines: [l for l in lines if not ('"received relay message"' in l and target in l)])
    tables = node_logs.parse_run(run)
    args = (run.name, run_stats.read_stats(run), list(pd.read_csv(run / "identities.csv")["host"]), scheduled,
            tables["publishes"], tables["receipts"])
    lenient = validation.check(*args, min_delivery=0.95)  # 5 of 105 missing: 95.2 % delivered
    assert lenient.problems == {} and lenient.counts["receipts_missing"] == 5
    strict = validation.check(*args, min_delivery=0.96)
    assert strict.problems["receipts"].startswith(
        "5 of 105 receipts missing, more than validation.min_delivery = 0.96 allows (message 3: 5 receivers)")


def test_lost_publish_is_named(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    schedule = pd.read_csv(run / "schedule.csv")
    target, publisher = schedule["msg_hash"][5], schedule["publisher"][5]
    rewrite_log(run, publisher, lambda lines: [l for l in lines if not (target in l and '"rest"' in l)])
    report = check(run)
    assert report.problems["publishes"] == f"1 of 7 scheduled messages were never published: message 5 by {publisher}"


def test_crashed_node_fails_the_processes_check(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    stats = json.loads((run / "run_stats.json").read_text())
    stats.update(status="failed", shadow_exit_code=1, failed_processes=[
        {"process": "node0006.wakunode2.1000", "status": "Normal(1)", "expected": "running", "actual": '{"exited":1}'}
    ])
    (run / "run_stats.json").write_text(json.dumps(stats))
    report = check(run)
    assert report.problems["processes"] == (
        'Shadow run failed with exit code 1; processes not in their expected final state: node0006.wakunode2.1000 ({"exited":1})'
    )


def test_negative_latency_is_named(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    tables = node_logs.parse_run(run)
    receipts = tables["receipts"].copy()
    receipts.loc[0, "received_ns"] = receipts.loc[0, "publish_ns"] - 1
    receipts.loc[0, "latency_ms"] = -1.0
    report = validation.check(
        run.name, run_stats.read_stats(run), list(pd.read_csv(run / "identities.csv")["host"]),
        schedule.read(run), tables["publishes"], receipts,
    )
    assert report.problems["latency"].startswith("1 receipts arrive before their message was published: ")


def test_cli_validate_writes_report(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    assert cli.main(["parse", "--run-dir", str(run)]) == 0
    assert cli.main(["validate", "--run-dir", str(run)]) == 0
    assert json.loads((run / "validation.json").read_text())["passed"] is True
