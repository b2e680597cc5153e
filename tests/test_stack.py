"""A tiny study end to end on the real Shadow and nwaku, when this machine has them.

The binaries are found the way the workflow finds them: local.yaml's
stack.shadow.binary or the Shadow the workflow built for the current patches,
and stack.nwaku.binary or a wakunode2 the workflow built for the current
patches and make flags. Without them the test is skipped, saying why.
"""

import json
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from conftest import RECORDED, REPO, patches_missing_from
from recorded import parsed_copies

from waku_shadow import cli, layout
from waku_shadow.configuration import sources
from waku_shadow.cost import bench
from waku_shadow.parse import node_logs
from waku_shadow.render import nwaku
from waku_shadow.run.collect import NWAKU_LOG
from waku_shadow.stack import builds

pytestmark = pytest.mark.stack


def shadow_binary(study):
    """The Shadow the workflow runs: the machine config's, or the one it builds."""
    return study.stack.shadow_binary or REPO / builds.shadow_build_dir(study) / "bin" / "shadow"


def missing_stack() -> str | None:
    """Why the real stack cannot run here, or None when it can."""
    study = sources.study_from_snakemake({})
    shadow = shadow_binary(study)
    if not shutil.which(str(shadow)):
        return (f"no Shadow at {shadow} (set stack.shadow.binary in {sources.local_config_path()}, "
                "or let the workflow build Shadow)")
    missing = patches_missing_from(shadow)
    if missing:
        return f"the Shadow at {shadow} is not built with {', '.join(missing)}"
    wakunode2 = study.stack.nwaku_binary or REPO / builds.nwaku_build_dir(study) / "wakunode2"
    if not shutil.which(str(wakunode2)):
        return f"no wakunode2 built for the current patches and make flags ({wakunode2}); run the workflow once"
    return None


def tiny_study(results_dir, size="2 KB", shadow=None) -> dict:
    return {
        "study": "stack-test",
        "seed": 3,
        "network": {"nodes": 8, "peers_per_node": 3, "latency": "50 ms"},
        "traffic": {"publishers": 2, "messages_per_publisher": 1, "message_sizes": [size], "interval": "2 s", "warmup_messages": 1},
        "shadow": {"bootstrap": "10 s", "drain": "5 s", **(shadow or {})},
        "resources": {"results_dir": str(results_dir)},
    }


def run_workflow(config_path, study: dict, timeout=1800, until: str | None = None):
    """``study`` written to config_path and run by the workflow, up to rule ``until`` if given."""
    config_path.write_text(yaml.safe_dump(study))
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", str(config_path),
         *(["--until", until] if until else [])],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def tiny_runs_with_and_without(tmp_path, name: str, size: str, switch: str, shadow: dict | None = None) -> dict:
    """The tiny study's run folders at ``size`` with the boolean shadow setting ``switch`` off (False)
    and on (True), each with the other ``shadow`` settings."""
    runs = {}
    for setting in (False, True):
        results = tmp_path / f"{name}-{setting}"
        run_workflow(tmp_path / f"{name}-{setting}.yaml", tiny_study(results, size, {**(shadow or {}), switch: setting}))
        (runs[setting],) = (results / "stack-test" / "runs").iterdir()
    return runs


def assert_same_receipts_and_copies(first, second) -> None:
    compared = bench.compare_receipts(first, second)
    # the warm-up and one message per publisher, each received by the 7 other nodes
    assert compared["receipts_first"] == compared["receipts_second"] == compared["receipts_in_both"] == 3 * 7
    assert compared["identical_share"] == 1.0 and compared["same_parent_share"] == 1.0
    assert compared["copies_sent"][0] == compared["copies_sent"][1] > 0


def test_tiny_study_end_to_end(tmp_path):
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    run_workflow(tmp_path / "tiny.yaml", tiny_study(tmp_path / "results"))
    summary = pd.read_csv(tmp_path / "results" / "stack-test" / "latency_summary.csv")
    assert list(summary["count"]) == [2 * 7]
    # L_g + one hop (50 ms) + L_v is the least any receipt can take
    assert summary["min"].iloc[0] >= 150 + 50 + 12


def test_the_d_sweeps_d12_run_publishes_every_message_at_the_first_try(tmp_path):
    """nwaku v0.36.0 once answered one publish of this run with HTTP 400 "could not decode" on every
    retry (CHANGELOG.md, 2026-11-24); each of its publishes must now be accepted at once."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    overlay = tmp_path / "d12.yaml"
    overlay.write_text(yaml.safe_dump({"sweep": {"parameter": "gossipsub.d", "values": [12]},
                                       "traffic": {"message_sizes": ["10 KB"]},
                                       "resources": {"results_dir": str(tmp_path / "results")}}))
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", str(REPO / "configs/dsweep.yaml"), str(overlay)],
        cwd=REPO, capture_output=True, text=True, timeout=3600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    validation = yaml.safe_load((tmp_path / "results/dsweep/runs/d12-n500-size10000B-seed1/validation.json").read_text())
    assert validation["passed"] and validation["counts"]["publish_retries"] == 0
    assert validation["counts"]["messages_published"] == validation["counts"]["messages_scheduled"] == 12


def syscall_counts(shadow_log) -> dict[str, int]:
    """The syscalls Shadow handled, from the counts its log ends with (experimental.use_syscall_counters)."""
    (counts,) = re.findall(r"Global syscall counts: \{([^}]*)\}", shadow_log.read_text())
    return {name: int(count) for name, count in (item.split(":") for item in counts.split(", "))}


def syscalls_with_and_without(tmp_path, name: str, switch: str) -> dict[bool, dict[str, int]]:
    """The tiny study's 200 KB run with ``switch`` off and on, Shadow counting the syscalls: every
    receipt and copy must be the same; returns each run's syscall counts."""
    runs = tiny_runs_with_and_without(tmp_path, name, "200 KB", switch, {"experimental": {"use_syscall_counters": True}})
    assert_same_receipts_and_copies(runs[False], runs[True])
    return {setting: syscall_counts(run / "shadow.log") for setting, run in runs.items()}


def test_memory_syscalls_in_the_shim_change_no_receipt(tmp_path):
    """Shadow patch 0002 only moves where the nodes' memory syscalls run: at 200 KB glibc maps each
    message buffer, and every receipt must stay at the same nanosecond from the same parent."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    calls = syscalls_with_and_without(tmp_path, "shim", "shim_memory_syscalls")
    assert calls[False]["munmap"] > 0 and calls[False]["brk"] > 0
    assert calls[True].get("munmap", 0) == calls[True].get("brk", 0) == 0


@pytest.mark.parametrize("name, switch", [
    # nwaku patch 0025: noise frames unencrypted at their encrypted length
    ("null-cipher", "nwaku_null_cipher"),
    # nwaku patch 0027: noise's handshakes keyed without X25519, with keys of the same length
    ("key-exchange", "nwaku_stand_in_key_exchange"),
    # nwaku patch 0029: no health monitor loop, which sends nothing
    ("health-loop", "nwaku_without_health_loop"),
    # nwaku patch 0033: exceptions raised without stack traces
    ("exception-traces", "nwaku_without_exception_traces"),
])
def test_cpu_work_left_out_changes_no_receipt(tmp_path, name, switch):
    """Each setting saves CPU time that Shadow does not simulate: at 200 KB every receipt must stay
    at the same nanosecond from the same parent, with the same copies sent."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    runs = tiny_runs_with_and_without(tmp_path, name, "200 KB", switch)
    assert_same_receipts_and_copies(runs[False], runs[True])


def test_selecting_only_to_wait_changes_no_receipt(tmp_path):
    """nwaku patch 0026 skips the select that follows a node's wake-up: at 200 KB every receipt must
    stay at the same nanosecond from the same parent, with the same copies, in fewer epoll_waits."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    calls = syscalls_with_and_without(tmp_path, "select", "nwaku_select_only_to_wait")
    assert calls[True]["epoll_wait"] < 0.8 * calls[False]["epoll_wait"]
    assert calls[True]["recvfrom"] == calls[False]["recvfrom"] and calls[True]["sendto"] == calls[False]["sendto"]


@pytest.mark.parametrize("family, variants", [
    ("recorded-publishing", {"recorded-publishing": {}, "recorded-publishing-idontwant": {"gossipsub": {"idontwant_on_publish": True}}}),
    ("recorded-muxer", {"recorded-muxer": {}, "recorded-muxer-mplex": {"libp2p": {"stream_muxer": "mplex"}}}),
])
def test_the_stack_makes_the_committed_switch_runs_receipt_for_receipt(tmp_path, family, variants):
    """tests/data/recorded-publishing* (patch 0016) and recorded-muxer* (patch 0013) were recorded on
    this stack: nwaku's own run and a switch rerun to the same receipts, to the nanosecond, from the
    same parents."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    (provenance,) = (RECORDED / family).glob("*/provenance.json")
    recorded_tag = json.loads(provenance.read_text())["nwaku"]["nwaku_tag"]
    # the release that recorded them, as this machine's workflow built it (given as a binary, so a
    # source tree the machine config names for another release does not matter)
    recorded_build = REPO / builds.nwaku_build_dir(sources.study_from_snakemake({"stack": {"nwaku": {"tag": recorded_tag}}}))
    wakunode2 = recorded_build / "wakunode2"
    if not wakunode2.exists():
        pytest.skip(f"the {family} runs were recorded on nwaku {recorded_tag}, which this machine has not built "
                    f"({wakunode2}; stack.nwaku.tag: {recorded_tag} builds it)")
    stack = {"nwaku": {"tag": recorded_tag, "binary": str(wakunode2), "source": None}}
    for variant, switch in variants.items():
        assert_rerun_is_the_committed_run(tmp_path, family, variant, switch, stack)


def assert_rerun_is_the_committed_run(tmp_path, family: str, variant: str, switch: dict, stack: dict) -> None:
    """tests/data/<family>.yaml run as ``variant`` with ``switch`` on ``stack``: every receipt of the
    committed run at the same nanosecond from the same parent."""
    study = yaml.safe_load((RECORDED / f"{family}.yaml").read_text())
    results = tmp_path / variant
    run_workflow(tmp_path / f"{variant}.yaml", {**study, **switch, "study": variant, "stack": stack,
                                                "resources": {"results_dir": str(results)}})
    (rerun,) = (results / variant / "runs").iterdir()
    (committed,) = parsed_copies([RECORDED / variant / rerun.name], tmp_path / "committed" / variant)
    compared = bench.compare_receipts(committed, rerun)
    assert compared["receipts_first"] == compared["receipts_in_both"] > 0
    assert compared["identical_share"] == 1.0 and compared["same_parent_share"] == 1.0


@pytest.mark.parametrize("study, filter_receipts", [
    ("recorded-light", 205),  # 11 messages at 20 clients, less 15 missed by the three that left
    ("recorded-light-topics", 145),  # 157 on the clients' topics, less 12 missed by the three that left
])
def test_the_stack_makes_the_committed_light_client_run_receipt_for_receipt(tmp_path, study, filter_receipts):
    """tests/data/recorded-light and recorded-light-topics (patch 0039) rerun on the default build:
    every relay receipt, and every light client's filter receipt, at the same nanosecond."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    assert_rerun_is_the_committed_run(tmp_path, study, study, {}, {})
    (rerun,) = (tmp_path / study / study / "runs").iterdir()
    committed = tmp_path / "committed" / study / rerun.name
    columns = ["receiver", "msg_hash", "from_host", "received_ns"]
    ours, theirs = (pd.read_parquet(run / layout.FILTER_RECEIPTS)[columns] for run in (rerun, committed))
    assert len(ours) == filter_receipts
    pd.testing.assert_frame_equal(ours, theirs)
    for table in (layout.STORE_QUERIES, layout.STORE_RETURNS):
        pd.testing.assert_frame_equal(*(pd.read_parquet(run / table) for run in (rerun, committed)))


def test_recorded_shards_replay_receipt_for_receipt(tmp_path):
    """tests/data/recorded-shards (4 shards, 2 per node, patch 0040) rerun on the default build: every
    receipt at the same nanosecond from the same parent, and none at a node off the message's shard."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    assert_rerun_is_the_committed_run(tmp_path, "recorded-shards", "recorded-shards", {}, {})


def test_recorded_classes_replay_receipt_for_receipt(tmp_path):
    """tests/data/recorded-classes (two bandwidth classes over two cities, each a network node of its
    own) rerun on the default build: every receipt at the same nanosecond from the same parent."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    assert_rerun_is_the_committed_run(tmp_path, "recorded-classes", "recorded-classes", {}, {})


def test_recorded_discv5_replay_receipt_for_receipt(tmp_path):
    """tests/data/recorded-discv5 (no static peers: discv5 from two bootstrap nodes, patches 0041 and
    0042) rerun on the default build: the same graph, event for event, and every receipt at the same
    nanosecond from the same parent."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    assert_rerun_is_the_committed_run(tmp_path, "recorded-discv5", "recorded-discv5", {}, {})
    (rerun,) = (tmp_path / "recorded-discv5" / "recorded-discv5" / "runs").iterdir()
    committed = tmp_path / "committed" / "recorded-discv5" / rerun.name
    pd.testing.assert_frame_equal(*(pd.read_parquet(run / layout.TOPOLOGY_EVENTS) for run in (rerun, committed)))


def test_a_rendered_bootstrap_enr_is_the_one_nwaku_builds(tmp_path):
    """The ENR the workflow renders for a bootstrap node from its seeded key is, byte for byte, the one
    the node builds for itself at start (nwaku logs it at INFO: "DNS: discoverable ENR")."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    study = yaml.safe_load((RECORDED / "recorded-discv5.yaml").read_text())
    results = tmp_path / "results"
    run_workflow(tmp_path / "enr.yaml", {**study, "study": "enr", "shadow": {**study["shadow"], "nwaku_log_level": "INFO"},
                                         "resources": {"results_dir": str(results)}}, until="simulate")
    (run_dir,) = (results / "enr" / "runs").iterdir()
    hosts = yaml.safe_load((run_dir / "shadow.yaml").read_text())["hosts"]
    rendered = [a.split("=", 1)[1] for a in hosts["node0002"]["processes"][0]["args"] if a.startswith("--discv5-bootstrap-node=")]
    logged = {record["enr"] for host in ("node0000", "node0001")
              for record in node_logs.events(run_dir / layout.LOGS / host / NWAKU_LOG, ("DNS: discoverable ENR",))}
    assert len(rendered) == 2 and set(rendered) == logged


def test_without_its_shard_list_nwaku_gives_every_node_every_shard(tmp_path):
    """tests/data/recorded-shards rendered by the workflow and run without WAKU_SIM_RELAY_SHARDS (patch 0040's
    setting): nwaku v0.38.1 subscribes every relay node to every shard whatever its --shard list, so
    every node gets every message, and validation names the receipts off a node's shards."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    study = yaml.safe_load((RECORDED / "recorded-shards.yaml").read_text())
    results = tmp_path / "results"
    config_path = tmp_path / "recorded-shards-released.yaml"
    run_workflow(config_path, {**study, "study": "recorded-shards-released", "resources": {"results_dir": str(results)}},
                 until="render")
    (run_dir,) = (results / "recorded-shards-released" / "runs").iterdir()
    config = yaml.safe_load((run_dir / "shadow.yaml").read_text())
    for host in config["hosts"].values():
        assert host["processes"][0]["environment"].pop(nwaku.ENV_RELAY_SHARDS)
    (run_dir / "shadow.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    shadow = shadow_binary(sources.study_from_snakemake({}))
    assert cli.main(["simulate", "--run-dir", str(run_dir), "--shadow", str(shadow)]) == 0
    assert cli.main(["parse", "--run-dir", str(run_dir)]) == 0
    assert cli.main(["validate", "--run-dir", str(run_dir)]) != 0
    report = json.loads((run_dir / "validation.failed.json").read_text())
    nodes, messages = report["counts"]["nodes"], report["counts"]["messages_scheduled"]
    assert report["counts"]["receipts"] == messages * (nodes - 1) > report["counts"]["receipts_expected"]
    assert "by a node that does not serve the message's shard" in report["checks"]["receipts"]


def test_a_killed_service_node_fails_validation_naming_its_clients(tmp_path):
    """The recorded-light study with one service node's nwaku killed after the first messages: validation
    names each of its clients, and it, for the messages they never got."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    run_dir, killed = killed_service_node_run(tmp_path)
    assert cli.main(["parse", "--run-dir", str(run_dir)]) == 0
    assert cli.main(["validate", "--run-dir", str(run_dir)]) != 0
    text = json.loads((run_dir / "validation.failed.json").read_text())["checks"]["filter receipts"]
    clients = pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False).query("service_node == @killed")["host"]
    clients = clients[~clients.isin(pd.read_csv(run_dir / layout.CHURN)["host"])]  # those that left may miss some
    assert all(f"{client} (service node {killed}) never got message" in text for client in clients[:2])


def killed_service_node_run(tmp_path):
    """tests/data/recorded-light.yaml rendered by the workflow, one service node's nwaku killed (SIGKILL)
    after its clients' last lightpush, and simulated: the run folder and the killed node's host."""
    study = yaml.safe_load((RECORDED / "recorded-light.yaml").read_text())
    results = tmp_path / "results"
    config_path = tmp_path / "recorded-light-killed.yaml"
    config_path.write_text(yaml.safe_dump({**study, "study": "recorded-light-killed", "resources": {"results_dir": str(results)}}))
    subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", str(config_path), "--until", "render"],
                   cwd=REPO, check=True, capture_output=True)
    (run_dir,) = (results / "recorded-light-killed" / "runs").iterdir()
    identities = pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False)
    schedule = pd.read_csv(run_dir / layout.SCHEDULE, keep_default_na=False)
    service_of = dict(zip(identities["host"], identities["service_node"]))
    light = schedule[schedule["light_client"] != ""]
    last_push = light.groupby(light["light_client"].map(service_of))["scheduled_ns"].max()
    killed = last_push.idxmin()  # after its clients' last lightpush, so that every REST call still succeeds
    kill_ns = last_push[killed] + KILLED_AFTER_NS
    assert (schedule["scheduled_ns"] > kill_ns).any()
    config = yaml.safe_load((run_dir / "shadow.yaml").read_text())
    config["hosts"][killed]["processes"][0].update(shutdown_time=f"{kill_ns} ns", shutdown_signal="SIGKILL",
                                                    expected_final_state={"signaled": "SIGKILL"})
    (run_dir / "shadow.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    shadow = shadow_binary(sources.study_from_snakemake({}))
    assert cli.main(["simulate", "--run-dir", str(run_dir), "--shadow", str(shadow)]) == 0
    return run_dir, killed


KILLED_AFTER_NS = 800_000_000  # the lightpush, the proof's 150 ms and the REST answer take about 0.5 s


@pytest.mark.parametrize("variant, switch", [
    ("recorded-muxer", {}),
    ("recorded-muxer-mplex", {"libp2p": {"stream_muxer": "mplex"}}),
])
def test_an_essential_build_makes_the_committed_runs_receipt_for_receipt(tmp_path, variant, switch):
    """stack.nwaku.patches: essential leaves out every patch of the speed tier, and with them their
    shadow.nwaku_* switches: its wakunode2 must give the committed runs, made on a build of every
    patch, to the nanosecond from the same parents."""
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    (provenance,) = (RECORDED / "recorded-muxer").glob("*/provenance.json")
    recorded_tag = json.loads(provenance.read_text())["nwaku"]["nwaku_tag"]
    essential = {"tag": recorded_tag, "patches": "essential"}
    built = builds.nwaku_build_dir(sources.study_from_snakemake({"stack": {"nwaku": essential}})) / "wakunode2"
    wakunode2 = REPO / built
    if not wakunode2.exists():
        pytest.skip(f"no essential build of nwaku {recorded_tag} here ({wakunode2}): snakemake --cores 2 {built} "
                    f"--config 'stack={{nwaku: {{tag: {recorded_tag}, patches: essential}}}}' builds it")
    stack = {"nwaku": {**essential, "binary": str(wakunode2), "source": None}}
    assert_rerun_is_the_committed_run(tmp_path, "recorded-muxer", variant, switch, stack)
