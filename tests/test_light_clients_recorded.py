"""Light clients on the recorded real run (tests/data/recorded-light/): the parse stage against the raw
logs, validation of every role, the analyses' invariants, and the docs' blocks from its summary."""

import gzip
import json
from dataclasses import asdict

import pandas as pd
import pytest
from recorded import LIGHT_RUN, copy_run, parsed_copies, raw_records, rewrite_log

from waku_shadow import cli, layout
from waku_shadow.analyse import light_clients
from waku_shadow.configuration import loader
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.report import light_tables, study_analysis, study_report, summaries
from waku_shadow.run.memory import MemoryBreakdown


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    (run,) = parsed_copies([LIGHT_RUN], tmp_path_factory.mktemp("light"))
    assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    return run


def test_every_filter_push_a_client_logged_is_a_receipt_timed_from_the_publishers_intent(parsed):
    receipts = pd.read_parquet(parsed / layout.FILTER_RECEIPTS)
    intents = {r["msg_hash"]: r["intentTime"] for kind in ("publish intent", "lightpush intent")
               for _, r in raw_records(LIGHT_RUN, kind)}
    raw = {(host, r["msg_hash"]): (r["receivedTime"] - intents[r["msg_hash"]]) / 1e6
           for host, r in raw_records(LIGHT_RUN, "received filter push")}
    assert len(receipts) == len(raw) > 0
    ours = dict(zip(zip(receipts["receiver"], receipts["msg_hash"]), receipts["latency_ms"]))
    assert ours == pytest.approx(raw)
    identities = pd.read_csv(LIGHT_RUN / layout.IDENTITIES, keep_default_na=False)
    assert set(receipts["receiver"]) == set(identities.loc[identities["role"] == "light", "host"])


def test_a_lightpushed_message_enters_relay_at_its_clients_service_node(parsed):
    publishes = pd.read_parquet(parsed / layout.PUBLISHES)
    light = publishes[publishes["light_client"] != ""]
    assert len(light) == 6 and light["intent_logged"].all()
    identities = pd.read_csv(LIGHT_RUN / layout.IDENTITIES, keep_default_na=False).set_index("host")
    assert (light["publish_host"] == light["light_client"].map(identities["service_node"])).all()
    pushes = pd.read_parquet(parsed / layout.LIGHTPUSHES).set_index("message")
    assert (pushes.loc[light["message"], "client"].to_numpy() == light["light_client"].to_numpy()).all()
    assert ((light.set_index("message")["publish_ns"] - pushes["received_ns"]).dropna() >= 0).all()


def test_the_recorded_run_passes_every_check_of_every_role(parsed):
    report = json.loads((parsed / layout.VALIDATION).read_text())
    checks, counts = report["checks"], report["counts"]
    assert report["passed"] and checks["filter receipts"] == checks["lightpushes"] == checks["store queries"] == "ok"
    # three clients left and came back (light_clients.churn); what they missed is in their store windows
    assert counts["filter_receipts"] + counts["filter_receipts_missed_away"] == counts["filter_receipts_expected"] == 11 * 20
    assert counts["filter_receipts_missed_away"] > 0 and counts["store_queries"] == counts["store_queries_planned"] == 3
    assert report["counts"]["receipts_expected"] == 11 * 11  # relay nodes only, less each message's entry node


def test_a_client_that_missed_a_message_fails_validation_naming_it_and_its_service_node(tmp_path):
    run = copy_run(LIGHT_RUN, tmp_path)
    identities = pd.read_csv(run / layout.IDENTITIES, keep_default_na=False).set_index("host")
    schedule = pd.read_csv(run / layout.SCHEDULE)
    dropped = schedule.loc[5, "msg_hash"]
    rewrite_log(run, "client0001", lambda lines: [line for line in lines
                                                  if not ('"received filter push"' in line and dropped in line)])
    assert cli.main(["parse", "--run-dir", str(run)]) == 0
    assert cli.main(["validate", "--run-dir", str(run)]) != 0
    failed = json.loads((run / "validation.failed.json").read_text())
    service = identities.at["client0001", "service_node"]
    assert failed["checks"]["filter receipts"] == (
        f"1 of 220 filter receipts missing: client0001 (service node {service}) never got message 5")


def test_a_client_that_left_may_miss_only_what_its_store_window_covers(tmp_path):
    run = copy_run(LIGHT_RUN, tmp_path)
    churn = pd.read_csv(run / layout.CHURN).set_index("host")
    schedule = pd.read_csv(run / layout.SCHEDULE)
    query_ns = churn.at["client0007", "rejoin_ns"] + 3_000_000_000
    after = schedule[schedule["scheduled_ns"] >= query_ns].iloc[0]
    rewrite_log(run, "client0007", lambda lines: [line for line in lines
                                                  if not ('"received filter push"' in line and after["msg_hash"] in line)])
    assert cli.main(["parse", "--run-dir", str(run)]) == 0
    assert cli.main(["validate", "--run-dir", str(run)]) != 0
    failed = json.loads((run / "validation.failed.json").read_text())
    assert failed["checks"]["filter receipts"].endswith(f"client0007 (service node node0007) never got message {after['message']}")


def test_each_store_query_is_its_answer_and_a_failed_one_is_named(parsed, tmp_path):
    queries = pd.read_parquet(parsed / layout.STORE_QUERIES)
    returns = pd.read_parquet(parsed / layout.STORE_RETURNS)
    churn = pd.read_csv(LIGHT_RUN / layout.CHURN).set_index("host")
    assert sorted(queries["client"]) == sorted(churn.index) and (queries["http_code"] == 200).all()
    assert (queries["query_ns"] == queries["client"].map(churn["rejoin_ns"]) + 3_000_000_000).all()
    for stdout in sorted(LIGHT_RUN.glob("logs/*/curl.*.stdout.gz")):
        answer = json.loads(gzip.decompress(stdout.read_bytes()).decode().splitlines()[0])
        client = stdout.parent.name
        assert list(returns.loc[returns["client"] == client, "msg_hash"]) == [m["messageHash"] for m in answer["messages"]]
    run = copy_run(LIGHT_RUN, tmp_path)
    (stdout,) = run.glob("logs/client0015/curl.*.stdout.gz")
    text = gzip.decompress(stdout.read_bytes()).decode().splitlines()
    failed_answer = [json.dumps({"statusCode": 503, "statusDesc": "SERVICE_UNAVAILABLE"}),
                     text[-1].replace('"http_code": "200"', '"http_code": "503"')]
    stdout.write_bytes(gzip.compress("\n".join(failed_answer).encode()))
    assert cli.main(["parse", "--run-dir", str(run)]) == 0
    assert cli.main(["validate", "--run-dir", str(run)]) != 0
    failed = json.loads((run / "validation.failed.json").read_text())
    assert failed["checks"]["store queries"] == (
        f"1 of 3 store queries failed: client0015 (service node node0007) at {churn.at['client0015', 'rejoin_ns'] / 1e9 + 3:g} s "
        "(HTTP 503, store 503)")


def test_what_the_store_gave_back_is_what_a_returning_client_had_missed(parsed):
    recovery = light_clients.store_recovery(parsed).set_index("client")
    receipts = pd.read_parquet(parsed / layout.FILTER_RECEIPTS)
    returns = pd.read_parquet(parsed / layout.STORE_RETURNS)
    schedule = pd.read_csv(LIGHT_RUN / layout.SCHEDULE)
    measured = schedule[~schedule["warmup"]]
    for client, row in recovery.iterrows():
        window = measured[(measured["scheduled_ns"] >= row["leave_ns"] - 2_000_000_000)
                          & (measured["scheduled_ns"] < row["rejoin_ns"] + 3_000_000_000)]
        missed = set(window["message"]) - set(receipts.loc[receipts["receiver"] == client, "message"])
        assert row["window_messages"] == len(window) and row["missed"] == len(missed) > 0
        assert row["recovered"] == len(missed & set(returns.loc[returns["client"] == client, "message"]))
        assert row["answer_after_return_s"] == pytest.approx(3 + row["query_s"])
    summary = light_clients.recovery_summary(recovery.reset_index()).iloc[0]
    assert summary["recovered_share"] == recovery["recovered"].sum() / recovery["missed"].sum()


def test_a_light_to_light_latency_is_the_sum_of_its_parts(parsed):
    parts = light_clients.decomposition(parsed)
    receipts = pd.read_parquet(parsed / layout.FILTER_RECEIPTS)
    assert len(parts) == ((receipts["light_client"] != "") & ~receipts["warmup"]).sum() > 5 * 20
    total = parts[light_clients.PARTS].sum(axis=1)
    assert total.to_numpy() == pytest.approx(parts["latency_ms"].to_numpy())
    assert (parts["service_node_ms"] >= 150).all()  # the service node's stand-in for the proof (rln.proof_generation)
    same_node = parts["relay_ms"] == 0
    assert same_node.any() and not same_node.all()


def test_latency_by_path_pools_relay_and_filter_receipts_by_role(parsed):
    receipts = light_clients.path_receipts(parsed)
    paths = light_clients.latency_by_path(receipts).set_index("path")
    assert list(paths.index) == light_clients.PATHS
    # measured: 2 relay publishers x 2 messages, at 11 relay nodes or 20 clients; 3 light publishers x 2;
    # less what the clients that left missed
    filtered = pd.read_parquet(parsed / layout.FILTER_RECEIPTS)
    filtered = filtered[~filtered["warmup"]].groupby(filtered["light_client"] != "").size()
    assert paths["receipts"].to_dict() == {"relay → relay": 4 * 11, "light → relay": 6 * 11,
                                          "relay → light": filtered[False], "light → light": filtered[True]}
    assert paths.at["light → light", "p50_ms"] > paths.at["relay → relay", "p50_ms"]


def test_the_study_analysis_and_summary_hold_the_light_client_tables(parsed, tmp_path, monkeypatch):
    study = loader.load(parsed / layout.RUN_CONFIG)
    results = StudyResults(study, [parsed])
    written = study_analysis.write(results, tmp_path / "analysis")
    names = {path.name for path in written}
    assert {layout.LATENCY_BY_PATH, layout.LIGHT_DECOMPOSITION, layout.SERVICE_LOAD, layout.BYTES_BY_ROLE,
            layout.STORE_RECOVERY} <= names
    load = pd.read_csv(tmp_path / "analysis" / layout.SERVICE_LOAD)
    filter_receipts = len(pd.read_parquet(parsed / layout.FILTER_RECEIPTS))
    assert load["clients_served"].sum() == 20 and load["filter_pushes"].sum() == filter_receipts and (load["bytes_out"] > 0).all()
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "recorded-light.yaml").write_text("study: recorded-light\n")
    folder = summaries.write(results, tmp_path / "summaries", configs)
    summary = summaries.read(folder)
    assert summary.light_clients and not summary.latency_by_path.empty
    block = light_tables.latency_by_path({summary.study: summary})
    assert "| 2 KB | light → light | 111 |" in block  # 120 less what the three clients that left missed
    assert "filter push" in light_tables.light_latency_parts({summary.study: summary})
    assert "| 2 KB | service | 2 |" in light_tables.service_load({summary.study: summary})
    monkeypatch.setattr(light_tables, "LIGHT_HEADLINE_STUDY", summary.study)
    light = summary.latency_by_path.set_index("path").loc["light → light"]
    answer = light_tables.answer({summary.study: summary})
    assert f"light client to light client p50 {light['p50_ms']:.0f} ms, p95 {light['p95_ms']:.0f} ms" in answer
    monkeypatch.setattr(light_tables, "CHURN_HEADLINE_STUDY", summary.study)
    recovered = summary.store_recovery
    assert (f"{len(recovered)} clients came back; their filters had missed {recovered['missed'].sum()} messages, and the "
            f"store gave back {recovered['recovered'].sum()} of them") in light_tables.churn_answer({summary.study: summary})
    assert "| 2 KB | 3 |" in light_tables.store_recovery({summary.study: summary})


def test_each_roles_memory_at_the_peak_is_read_from_the_runs_stats_into_the_cost_block(tmp_path, monkeypatch):
    (run,) = parsed_copies([LIGHT_RUN], tmp_path / "runs")
    assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    stats = json.loads((run / layout.RUN_STATS).read_text())
    stats["memory_at_peak"] = asdict(MemoryBreakdown(
        wall_seconds=20.0, taken_bytes=1 << 30, shadow_rss_bytes=1 << 28, processes=32, processes_anon_bytes=96 << 20,
        processes_file_bytes=0, shmem_bytes=0, nodes_by_role={"light": 20, "relay": 10, "service": 2},
        anon_bytes_by_role={"light": 40 << 20, "relay": 40 << 20, "service": 16 << 20}))
    (run / layout.RUN_STATS).write_text(json.dumps(stats))
    memory = light_clients.memory_by_role(run).set_index("role")
    assert memory["nodes"].to_dict() == {"light": 20, "relay": 10, "service": 2}
    assert memory.at["service", "anon_bytes_per_node"] == 8 << 20 and memory.at["light", "anon_bytes_per_node"] == 2 << 20
    assert (memory["wall_seconds"] == stats["wall_seconds"]).all()
    assert light_clients.memory_by_role(LIGHT_RUN).empty  # a run too short for a sample at its peak
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "recorded-light.yaml").write_text("study: recorded-light\n")
    results = StudyResults(loader.load(run / layout.RUN_CONFIG), [run])
    summary = summaries.read(summaries.write(results, tmp_path / "summaries", configs))
    block = light_tables.cost_by_role({summary.study: summary})
    assert f"| 2 KB | 1 | {stats['wall_seconds']:.0f} |" in block and block.rstrip().endswith("| service | 2 | 8.0 |")


def test_a_returning_clients_filter_pushes_and_its_service_nodes_relay_wait_for_a_dial_of_the_departed_client(parsed):
    """What docs/light-clients.md reads in this run: client0007 (service node node0007) came back at
    16.0 s; node0007's pushes to it of messages 7 to 10 all arrived at once, about 10 s after message 7;
    message 9, lightpushed through node0007, reached the relay nodes 8 s late; and client0003's store
    query, made before node0007 had archived messages 7 and 8, gave neither back."""
    filtered = pd.read_parquet(parsed / layout.FILTER_RECEIPTS)
    mine = filtered[filtered["receiver"] == "client0007"].set_index("message")
    assert mine.loc[[7, 8, 9, 10], "received_ns"].nunique() == 1 and mine.at[7, "latency_ms"] > 9_000
    relay = pd.read_parquet(parsed / layout.RECEIPTS)
    assert relay[relay["message"] == 9]["latency_ms"].median() > 8_000
    assert relay[relay["message"] == 6]["latency_ms"].median() < 1_000
    recovery = light_clients.store_recovery(parsed).set_index("client")
    returned = set(pd.read_parquet(parsed / layout.STORE_RETURNS).query("client == 'client0003'")["message"])
    assert {7, 8}.isdisjoint(returned) and recovery.at["client0003", "recovered"] < recovery.at["client0003", "missed"]


def test_clients_that_left_are_not_counted_as_relay_churn_in_the_report(parsed):
    assert not pd.read_csv(LIGHT_RUN / layout.CHURN).empty
    assert study_report.churn_section([parsed]) == []
