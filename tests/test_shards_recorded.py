"""A cluster of 4 shards, each node on 2 (nwaku patch 0040), on the recorded real run
(tests/data/recorded-shards/): each node got the messages of its shards and no others, and the
analysis splits latency by shard and bytes by the shards a node serves."""

import json

import pandas as pd
import pytest
from conftest import RECORDED
from recorded import SHARDS_RUN, copy_run, parsed_copies

from waku_shadow import cli, layout
from waku_shadow.analyse import shards as shard_analysis
from waku_shadow.configuration import loader
from waku_shadow.errors import ConfigError
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.render import shards
from waku_shadow.report import shard_tables, study_analysis, study_report, summaries


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    (run,) = parsed_copies([SHARDS_RUN], tmp_path_factory.mktemp("shards"))
    assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    return run


@pytest.fixture(scope="module")
def served():
    identities = pd.read_csv(SHARDS_RUN / layout.IDENTITIES, keep_default_na=False)
    return shards.served_by_host(identities, list(identities["host"]))


def test_each_node_got_the_messages_of_its_shards_and_no_others(parsed, served):
    report = json.loads((parsed / layout.VALIDATION).read_text())
    assert report["passed"]
    publishes = pd.read_parquet(parsed / layout.PUBLISHES).set_index("message")
    assert sorted(publishes["shard"].unique()) == [0, 1, 2, 3]
    receipts = pd.read_parquet(parsed / layout.RECEIPTS)
    shard = receipts["message"].map(publishes["shard"])
    assert all(s in served[host] for s, host in zip(shard, receipts["receiver"]))
    members = {s: sum(s in mine for mine in served.values()) for s in range(4)}
    assert report["counts"]["receipts_expected"] == sum(members[s] - 1 for s in publishes["shard"]) == len(receipts)
    assert all(len(mine) == 2 for mine in served.values())


def test_a_receipt_off_the_nodes_shards_fails_validation_naming_it(tmp_path):
    run = copy_run(SHARDS_RUN, tmp_path)
    identities = pd.read_csv(run / layout.IDENTITIES, keep_default_na=False)
    schedule = pd.read_csv(run / layout.SCHEDULE)
    node = identities.loc[~identities["host"].isin(schedule["publisher"]), "host"].iloc[0]
    mine = identities.loc[identities["host"] == node, "shards"].iloc[0].split()
    identities.loc[identities["host"] == node, "shards"] = mine[0]  # as if it served one shard of its two
    identities.to_csv(run / layout.IDENTITIES, index=False)
    assert cli.main(["parse", "--run-dir", str(run)]) == 0
    assert cli.main(["validate", "--run-dir", str(run)]) != 0
    receipts = json.loads((run / "validation.failed.json").read_text())["checks"]["receipts"]
    assert "by a node that does not serve the message's shard" in receipts and node in receipts


def test_latency_is_split_by_shard_and_bytes_by_shards_served(parsed, served):
    by_shard = shard_analysis.latency_by_shard(parsed)
    assert by_shard["shard"].tolist() == [0, 1, 2, 3]
    assert by_shard["nodes"].tolist() == [sum(s in mine for mine in served.values()) for s in range(4)]
    measured = pd.read_parquet(parsed / layout.RECEIPTS).query("~warmup")
    assert by_shard["receipts"].sum() == len(measured)
    assert (by_shard["p50_ms"] <= by_shard["max_ms"]).all() and (by_shard["p50_ms"] > 0).all()
    served_bytes = shard_analysis.bytes_by_shards_served(parsed)
    assert served_bytes[["shards_served", "nodes"]].values.tolist() == [[2, 20]]
    assert served_bytes["bytes_in_per_node"].iloc[0] > 2000 * 8 / 2  # at least its shards' messages, once each


def test_a_sharded_studys_summary_writes_its_docs_table(parsed, tmp_path):
    study = loader.load(RECORDED / "recorded-shards.yaml")
    folder = summaries.write(StudyResults(study, [parsed]), tmp_path, configs_dir=RECORDED)
    summary = summaries.read(folder)
    assert summary.sharded and len(summary.latency_by_shard) == 4 and len(summary.bytes_by_shards_served) == 1
    table = shard_tables.points(summary)
    assert table["nodes_per_shard"].tolist() == [10.0]
    assert table["bytes_in"].iloc[0] == pytest.approx(summary.bytes_by_shards_served["bytes_in_per_node"].iloc[0])
    block = shard_tables.by_point({summary.study: summary}, (summary.study,))
    assert "| 10 |" in block and "bytes in / node" in block
    assert shard_tables.answer({summary.study: summary}, (summary.study,)) is None  # no sweep: nothing to set side by side
    (folder / "latency_by_shard.csv").unlink()
    with pytest.raises(ConfigError, match="latency_by_shard.csv"):
        summaries.read(folder)


def test_the_study_report_and_analysis_split_by_shard(parsed, tmp_path):
    results = StudyResults(loader.load(RECORDED / "recorded-shards.yaml"), [parsed])
    report = study_report.study_report(results)
    assert "a cluster of 4 shards, each node on 2 drawn from the seed" in report
    assert "## Shards" in report and "| n20-size2000B-seed5 | 2 | 20 |" in report
    written = study_analysis.write(results, tmp_path)
    assert {layout.LATENCY_BY_SHARD, layout.BYTES_BY_SHARDS_SERVED} <= {path.name for path in written}
