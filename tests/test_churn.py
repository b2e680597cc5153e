"""Churn: who leaves and when, how Shadow stops and restarts them, how their logs are joined, and
which missing receipts their absence explains (on the recorded real runs)."""

import gzip
import json

import pandas as pd
import pytest
from recorded import CHURN_RUN, RUN_2KB, copy_run, parsed_copies, rewrite_log

from waku_shadow import layout
from waku_shadow.analyse import study_tables
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import merge
from waku_shadow.errors import LogError
from waku_shadow.parse import node_logs
from waku_shadow.render import churn_plan, nwaku, plan, run_folder, schedule
from waku_shadow.run import collect, run_stats, shadow_yaml
from waku_shadow.validate import validation


@pytest.fixture
def churning_study(small_study):
    return loader.resolve(merge(small_study.resolved, {"churn": {"leaves_per_minute": 60, "downtime": "3 s"},
                                                    "traffic": {"interval": "2 s"}}))


def test_no_churn_by_default(small_study):
    assert plan.plan(small_study, 2000).outages == []


def test_outages_are_of_up_non_publishers_in_the_publishing_window(churning_study):
    run = plan.plan(churning_study, 2000)
    assert run.outages and run.outages == plan.plan(churning_study, 2000).outages  # seeded
    for outage in run.outages:
        assert outage.node not in run.publishers
        assert churning_study.bootstrap_ns <= outage.leave_ns <= churning_study.last_publish_ns
        assert outage.rejoin_ns - outage.leave_ns == churning_study.churn_downtime_ns
        assert len(outage.dials) == churning_study.peers_per_node and outage.node not in outage.dials
    back_at = {}
    for outage in run.outages:  # never leaves while away, nor within a downtime of coming back
        assert outage.node not in back_at or back_at[outage.node] + churning_study.churn_downtime_ns <= outage.leave_ns
        back_at[outage.node] = outage.rejoin_ns


def test_a_leaving_node_is_stopped_and_started_again_with_its_key_and_new_dials(churning_study, tmp_path):
    run = plan.plan(churning_study, 2000)
    run_folder.render(run, tmp_path, "/opt/wakunode2", "curl")
    outage = run.outages[0]
    me = run.identities[outage.node]
    processes = [p for p in shadow_yaml.read(tmp_path)["hosts"][me.host]["processes"] if p["path"] == "/opt/wakunode2"]
    first, second = processes[0], processes[1]
    assert (first["shutdown_time"], first["shutdown_signal"]) == (f"{outage.leave_ns} ns", nwaku.LEAVE_SIGNAL)
    assert first["expected_final_state"] == nwaku.LEFT_STATE
    assert second["start_time"] == f"{outage.rejoin_ns} ns"
    assert f"--nodekey={me.nodekey}" in second["args"]
    dialled = {a.split("/")[2] for a in second["args"] if a.startswith("--staticnode=")}
    assert dialled == {run.identities[d].ip for d in outage.dials}
    written = churn_plan.read(tmp_path)
    assert len(written) == len(run.outages) and written["host"].iloc[0] == me.host


def _shadow_host(run_dir):
    """A run folder whose one host, node0000, runs /opt/wakunode2: its directory of Shadow's output."""
    (run_dir / "shadow.yaml").write_text("hosts:\n  node0000:\n    processes:\n    - path: /opt/wakunode2\n")
    host = run_dir / "shadow.data" / "hosts" / "node0000"
    host.mkdir(parents=True)
    return host


def test_the_stdouts_of_a_node_that_came_back_are_joined_in_start_order(tmp_path):
    host = _shadow_host(tmp_path)
    (host / "wakunode2.1000.stdout").write_text('{"msg":"first"}\n')
    (host / "wakunode2.1012.stdout").write_text('{"msg":"third"}\n')
    (host / "wakunode2.1003.stdout").write_text('{"msg":"second"}\n')
    out = collect.collect(tmp_path)
    assert gzip.open(out / "node0000" / "wakunode2.log.gz", "rt").read().split() == [
        '{"msg":"first"}', '{"msg":"second"}', '{"msg":"third"}']


def test_a_left_process_cut_mid_line_is_named(tmp_path):
    host = _shadow_host(tmp_path)
    (host / "wakunode2.1000.stdout").write_text('{"msg":"first"}\n{"msg":"fir')
    (host / "wakunode2.1001.stdout").write_text('{"msg":"second"}\n')
    with pytest.raises(LogError, match=r"wakunode2.1000.stdout: the nwaku process that left ends its log mid-line"):
        collect.collect(tmp_path)


def _validate(run, outages):
    tables = node_logs.parse_run(run)
    return validation.check(run.name, run_stats.read_stats(run), list(pd.read_csv(run / layout.IDENTITIES)["host"]),
                            schedule.read(run), tables["publishes"], tables["receipts"],
                            outages=outages)


def _leaf(run, messages):
    """A node that publishes none of ``messages`` and relays none of them to anyone: dropping its
    receipts leaves every delivery tree whole, as a node away would."""
    receipts = node_logs.parse_run(run)["receipts"]
    relays = set(receipts.loc[receipts["message"].isin(messages), "from_host"])
    publishers = set(pd.read_csv(run / layout.SCHEDULE)["publisher"])
    return next(h for h in pd.read_csv(run / layout.IDENTITIES)["host"] if h not in relays | publishers)


def _drop_receipts(run, host, messages):
    hashes = set(pd.read_csv(run / layout.SCHEDULE).set_index("message").loc[messages, "msg_hash"])
    rewrite_log(run, host, lambda lines: [l for l in lines if not ('"received relay message"' in l and any(h in l for h in hashes))])


def test_receipts_missed_while_away_or_rejoining_are_not_losses(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    publishes = node_logs.parse_run(run)["publishes"].set_index("message")
    host = _leaf(run, [2, 3, 4, 5])
    # away for messages 2 and 3; back before messages 4 and 5, which it misses too, rejoining:
    # nothing reached it between its return and their publishes
    leave, rejoin = publishes.loc[2, "publish_ns"] - 1, publishes.loc[3, "publish_ns"] + 10**6
    _drop_receipts(run, host, [2, 3, 4, 5])
    outages = pd.DataFrame([(host, leave, rejoin, "")], columns=churn_plan.COLUMNS)
    report = _validate(run, outages)
    assert report.counts["receipts_missed_away"] == 2
    assert report.counts["receipts_missed_rejoining"] == 2  # nothing reached it after it came back before message 6
    assert report.counts["receipts_lost"] == 0 and report.problems == {}

    without_churn = _validate(run, None)
    assert without_churn.counts["receipts_lost"] == 4 and "receipts" in without_churn.problems


def test_a_node_back_and_reached_again_that_misses_a_message_lost_it(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    publishes = node_logs.parse_run(run)["publishes"].set_index("message")
    host = _leaf(run, [1, 4])
    leave, rejoin = publishes.loc[1, "publish_ns"] - 1, publishes.loc[2, "publish_ns"] - 10**6
    _drop_receipts(run, host, [1, 4])  # back before message 2, which it receives; message 4 is then a loss
    report = _validate(run, pd.DataFrame([(host, leave, rejoin, "")], columns=churn_plan.COLUMNS))
    assert (report.counts["receipts_missed_away"], report.counts["receipts_lost"]) == (1, 1)
    assert report.problems["receipts"].startswith(
        "1 of 105 receipts missing at nodes that were up (1 more missed by nodes away or rejoining)")


def test_a_recorded_run_with_churn_validates_with_its_misses_explained(tmp_path):
    """A real run: 7 leaves of 6 nodes (node0002 twice), every missing receipt missed away or rejoining."""
    (run,) = parsed_copies([CHURN_RUN], tmp_path)
    counts = json.loads((run / layout.VALIDATION).read_text())["counts"]
    assert (counts["receipts_missed_away"], counts["receipts_missed_rejoining"], counts["receipts_lost"]) == (11, 1, 0)
    assert counts["receipts"] == counts["receipts_expected"] - 12
    assert study_tables.delivery(run) == {"delivery": 183 / 195, "delivery_when_up": 1.0}


def test_a_node_that_left_twice_logs_three_lives_in_order():
    outages = churn_plan.read(CHURN_RUN)
    assert (outages["host"] == "node0002").sum() == 2
    starts = [time for _, line in node_logs.read_lines(CHURN_RUN / "logs" / "node0002" / collect.NWAKU_LOG)
              if '"msg":"Shutting down after receiving SIGTERM"' in line
              for time in [json.loads(node_logs.UNQUOTED_TIMESTAMP.sub(r'"ts":"\1",', line, count=1))["ts"]]]
    assert len(starts) == 2 and starts == sorted(starts)
    receipts = node_logs.parse_run(CHURN_RUN)["receipts"]
    mine = receipts[receipts["receiver"] == "node0002"]
    for leave, rejoin in outages.loc[outages["host"] == "node0002", ["leave_ns", "rejoin_ns"]].itertuples(index=False):
        assert not ((mine["received_ns"] > leave) & (mine["received_ns"] < rejoin)).any()  # nothing while away


def test_a_message_received_again_after_coming_back_is_set_apart():
    receipts = pd.DataFrame({
        "message": [1, 1, 1, 2, 2],
        "receiver": ["node0001", "node0001", "node0002", "node0002", "node0002"],
        "received_ns": [100, 900, 150, 200, 260],
    })
    outages = pd.DataFrame([("node0001", 300, 600, ""), ("node0002", 700, 800, "")], columns=churn_plan.COLUMNS)
    # node0001 left and came back between its two receipts of message 1; node0002's two receipts of
    # message 2 fall in one life: a true duplicate, left for validation to name
    assert node_logs.received_again(receipts, outages).tolist() == [False, True, False, False, False]
    assert not node_logs.received_again(receipts, churn_plan.read(RUN_2KB)).any()
