"""Light clients on the recorded real run (tests/data/recorded-light/): the parse stage against the raw
logs, validation of every role, the analyses' invariants, and the docs' blocks from its summary."""

import json

import pandas as pd
import pytest
from recorded import LIGHT_RUN, copy_run, parsed_copies, raw_records, rewrite_log

from waku_shadow import cli, layout
from waku_shadow.analyse import light_clients
from waku_shadow.configuration import loader
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.report import light_tables, summaries, study_analysis


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
    assert report["passed"] and report["checks"]["filter receipts"] == "ok" and report["checks"]["lightpushes"] == "ok"
    assert report["counts"]["filter_receipts"] == report["counts"]["filter_receipts_expected"] == 11 * 20
    assert report["counts"]["receipts_expected"] == 11 * 11  # relay nodes only, less each message's entry node


def test_a_client_that_missed_a_message_fails_validation_naming_it_and_its_service_node(tmp_path):
    run = copy_run(LIGHT_RUN, tmp_path)
    identities = pd.read_csv(run / layout.IDENTITIES, keep_default_na=False).set_index("host")
    schedule = pd.read_csv(run / layout.SCHEDULE)
    dropped = schedule.loc[5, "msg_hash"]
    rewrite_log(run, "client0003", lambda lines: [line for line in lines
                                                  if not ('"received filter push"' in line and dropped in line)])
    assert cli.main(["parse", "--run-dir", str(run)]) == 0
    assert cli.main(["validate", "--run-dir", str(run)]) != 0
    failed = json.loads((run / "validation.failed.json").read_text())
    service = identities.at["client0003", "service_node"]
    assert failed["checks"]["filter receipts"] == (
        f"1 of 220 filter receipts missing: client0003 (service node {service}) never got message 5")


def test_a_light_to_light_latency_is_the_sum_of_its_parts(parsed):
    parts = light_clients.decomposition(parsed)
    assert len(parts) == 6 * 20  # 3 light publishers x 2 measured messages, at every client
    total = parts[light_clients.PARTS].sum(axis=1)
    assert total.to_numpy() == pytest.approx(parts["latency_ms"].to_numpy())
    assert (parts["service_node_ms"] >= 150).all()  # the service node's stand-in for the proof (rln.proof_generation)
    same_node = parts["relay_ms"] == 0
    assert same_node.any() and not same_node.all()


def test_latency_by_path_pools_relay_and_filter_receipts_by_role(parsed):
    receipts = light_clients.path_receipts(parsed)
    paths = light_clients.latency_by_path(receipts).set_index("path")
    assert list(paths.index) == light_clients.PATHS
    # measured: 2 relay publishers x 2 messages, at 11 relay nodes or 20 clients; 3 light publishers x 2
    assert paths["receipts"].to_dict() == {"relay → relay": 4 * 11, "light → relay": 6 * 11,
                                          "relay → light": 4 * 20, "light → light": 6 * 20}
    assert paths.at["light → light", "p50_ms"] > paths.at["relay → relay", "p50_ms"]


def test_the_study_analysis_and_summary_hold_the_light_client_tables(parsed, tmp_path, monkeypatch):
    study = loader.load(parsed / layout.RUN_CONFIG)
    results = StudyResults(study, [parsed])
    written = study_analysis.write(results, tmp_path / "analysis")
    names = {path.name for path in written}
    assert {layout.LATENCY_BY_PATH, layout.LIGHT_DECOMPOSITION, layout.SERVICE_LOAD, layout.BYTES_BY_ROLE} <= names
    load = pd.read_csv(tmp_path / "analysis" / layout.SERVICE_LOAD)
    assert load["clients_served"].sum() == 20 and load["filter_pushes"].sum() == 220 and (load["bytes_out"] > 0).all()
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "recorded-light.yaml").write_text("study: recorded-light\n")
    folder = summaries.write(results, tmp_path / "summaries", configs)
    summary = summaries.read(folder)
    assert summary.light_clients and not summary.latency_by_path.empty
    block = light_tables.latency_by_path({summary.study: summary})
    assert "| 2 KB | light → light | 120 |" in block
    assert "filter push" in light_tables.light_latency_parts({summary.study: summary})
    assert "| 2 KB | service | 2 |" in light_tables.service_load({summary.study: summary})
    monkeypatch.setattr(light_tables, "LIGHT_HEADLINE_STUDY", summary.study)
    light = summary.latency_by_path.set_index("path").loc["light → light"]
    assert (f"light client to light client p50 {light['p50_ms']:.0f} ms, p95 {light['p95_ms']:.0f} ms"
            in light_tables.answer({summary.study: summary}))
