"""The publishing switches (nwaku patch 0016 and the preamble build), replayed on recorded real runs:
tests/data/recorded-publishing* is one small study recorded with nwaku's own publishing and once per
switch, the same seed (tests/data/recorded-publishing.yaml says how)."""

import math
import re

import pandas as pd
import pytest
from conftest import RECORDED, REPO
from recorded import RUN_2KB, copy_run, parsed_copies, raw_records, rewrite_log

from waku_shadow import cli, layout
from waku_shadow.errors import LogError
from waku_shadow.analyse import study_tables
from waku_shadow.parse import node_logs
from waku_shadow.report import docs_tables

RUN = "n20-size50000B-seed4"
VARIANTS = ("recorded-publishing", "recorded-publishing-mesh", "recorded-publishing-idontwant", "recorded-publishing-preamble")


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    """Each variant's run, parsed and validated as the workflow does it."""
    base = tmp_path_factory.mktemp("publishing")
    return {variant: parsed_copies([RECORDED / variant / RUN], base / variant)[0] for variant in VARIANTS}


def publisher_sends(run) -> pd.Series:
    """Copies the publisher sent of each measured message."""
    sends = pd.read_parquet(run / layout.SENDS)
    publishes = pd.read_parquet(run / layout.PUBLISHES)
    measured = publishes[~publishes["warmup"]]
    own = sends.merge(measured[["msg_hash", "publisher"]], on="msg_hash")
    return own[own["sender"] == own["publisher"]].groupby("msg_hash").size()


def test_every_withheld_copy_line_is_a_row_naming_both_hosts(parsed):
    for variant in ("recorded-publishing-idontwant", "recorded-publishing-preamble"):
        withheld = pd.read_parquet(parsed[variant] / layout.WITHHELD)
        lines = raw_records(parsed[variant], "withheld relay copy")
        # the line names gossipsub's message id; the message lines give it in short beside the hash
        hash_of = {record["msg_id"]: record["msg_hash"] for _, record in raw_records(parsed[variant], "received relay message")}
        assert len(withheld) == len(lines) > 0
        assert sorted(zip(withheld["sender"], withheld["msg_hash"], withheld["reason"])) == sorted(
            (host, hash_of[f"{record['msg_hash'][2:14]}...{record['msg_hash'][-12:]}"], record["reason"]) for host, record in lines)
        assert withheld["to_host"].notna().all()


def test_a_withheld_copy_of_a_message_no_line_names_is_one_error(tmp_path):
    run = copy_run(RECORDED / "recorded-publishing-idontwant" / RUN, tmp_path)
    unknown = "0x" + "ab" * 32

    def rename_first(lines):
        first = next(i for i, line in enumerate(lines) if '"withheld relay copy"' in line)
        lines[first] = re.sub(r'"msg_hash":"0x[0-9a-f]+"', f'"msg_hash":"{unknown}"', lines[first])
        return lines

    host = raw_records(run, "withheld relay copy")[0][0]
    rewrite_log(run, host, rename_first)
    with pytest.raises(LogError, match=r"a withheld copy names gossipsub message id abababababab\.\.\.abababababab, "
                                       r"which the message lines give to no message"):
        node_logs.parse_run(run)


def test_idontwant_on_publish_spares_the_publisher_the_copies_coming_back(parsed):
    def withheld_from_publisher(variant) -> int:
        withheld = pd.read_parquet(parsed[variant] / layout.WITHHELD)
        publisher = pd.read_parquet(parsed[variant] / layout.PUBLISHES)["publisher"].iloc[0]
        return int((withheld["to_host"] == publisher).sum())

    assert withheld_from_publisher("recorded-publishing") == 0  # its peers relay their copies back
    assert withheld_from_publisher("recorded-publishing-idontwant") > 0


def test_publishing_to_the_mesh_sends_a_mesh_of_copies_instead_of_one_per_peer(parsed):
    links = pd.read_csv(RECORDED / "recorded-publishing" / RUN / layout.LINKS)
    publisher = pd.read_parquet(parsed["recorded-publishing"] / layout.PUBLISHES)["publisher"].iloc[0]
    peers = set(links.loc[links["dialer"] == publisher, "dialed"]) | set(links.loc[links["dialed"] == publisher, "dialer"])
    degree = len(peers)  # two nodes may both have dialled each other: one connection
    assert set(publisher_sends(parsed["recorded-publishing"])) == {degree}  # flooded: every peer
    assert degree > 8 and publisher_sends(parsed["recorded-publishing-mesh"]).max() <= 8  # D_high


def test_the_preamble_build_changes_nothing_nwakus_peers_say(parsed):
    """nim-libp2p sends PREAMBLE only to peers that negotiated /meshsub/1.4.0; nwaku's peers speak
    its own /vac/waku/relay/2.0.0, so a build with gossipsub v1.4 delivers every copy as before:
    no copy held back for IMRECEIVING, every receipt at the same nanosecond from the same peer."""
    preamble, own = parsed["recorded-publishing-preamble"], parsed["recorded-publishing"]
    assert set(pd.read_parquet(preamble / layout.WITHHELD)["reason"]) == {"idontwant"}
    columns = ["msg_hash", "receiver", "from_host", "received_ns"]
    assert pd.read_parquet(preamble / layout.RECEIPTS)[columns].equals(pd.read_parquet(own / layout.RECEIPTS)[columns])


def test_the_publishers_busy_uplink_is_the_copies_it_sent_at_its_rate(parsed):
    """About the copies the publisher sent times the message's bytes, at 50 Mbit/s; the framing and
    the rest of what it sends meanwhile (gossip, IDONTWANT) come on top. Flooding sends more copies
    than publishing to the mesh, and its uplink is busy for longer."""
    busy = {}
    for variant in ("recorded-publishing", "recorded-publishing-mesh"):
        run = parsed[variant]
        cli.main(["traffic", "--run-dir", str(run)])
        busy[variant] = study_tables.run_metrics(run)["publisher_busy_ms"]
        payload_ms = publisher_sends(run).mean() * 50_000 * 8 / 50e6 * 1000
        assert payload_ms <= busy[variant] <= 1.15 * payload_ms
    assert busy["recorded-publishing"] > 1.5 * busy["recorded-publishing-mesh"]


def test_a_build_without_the_withheld_lines_counts_none_rather_than_zero(tmp_path):
    (run,) = parsed_copies([RUN_2KB], tmp_path)
    assert math.isnan(study_tables.run_metrics(run)["withheld_copies"])


def test_the_features_block_sets_each_switch_beside_nwakus_own(parsed, tmp_path):
    results = tmp_path / "results"
    config = (RECORDED / "recorded-publishing.yaml").read_text()
    for variant in ("recorded-publishing", "recorded-publishing-mesh"):
        study_dir = results / variant
        (study_dir / layout.RUNS).mkdir(parents=True)
        run = study_dir / layout.RUNS / RUN
        run.symlink_to(parsed[variant])
        cli.main(["traffic", "--run-dir", str(run)])
        compared = "" if variant == "recorded-publishing" else "report: {compare_with: recorded-publishing}\n"
        (study_dir / layout.STUDY_CONFIG).write_text(config.replace("study: recorded-publishing", f"study: {variant}") + compared)
    section = docs_tables.tables(results, REPO / "bench", configs_dir=RECORDED)["features"]["recorded-publishing"]
    rows = {line.split(" | ")[0].strip("| "): line for line in section.splitlines() if line.startswith("| ")}
    for variant, label in (("recorded-publishing", "recorded-publishing"), ("recorded-publishing-mesh", "mesh")):
        metrics = study_tables.run_metrics(parsed[variant])
        assert rows[label].startswith(f"| {label} | 50 KB | 1 | {metrics['latency_min_ms']:.0f} | {metrics['latency_p50_ms']:.0f} | ")
        assert f"| {metrics['withheld_copies']:.0f} | {metrics['net_bytes_per_message'] / 1e6:.1f} |" in rows[label]
        assert rows[label].endswith(f"| {metrics['publisher_busy_ms']:.0f} |")
