import base64
import json
import re

import pandas as pd
import pytest
import yaml
from conftest import CONFIGS, REPO

from waku_shadow.configuration import loader, schema
from waku_shadow.configuration.study import merge
from waku_shadow.errors import ConfigError
from waku_shadow.render import network_graph, nwaku, plan, run_folder, schedule
from waku_shadow.stack import shadow_options


def test_gml_has_one_attribute_per_line(small_study):
    text = network_graph.gml(plan.plan(small_study, 2000))
    assert 'latency "50 ms"' in text and 'host_bandwidth_up "100 Mbit"' in text
    for line in text.splitlines():
        stripped = line.strip()
        # a line opens/closes a block or holds exactly one "key value" pair
        assert stripped in ("graph [", "node [", "edge [", "]") or re.fullmatch(r"\w+ (\"[^\"]*\"|[\d.]+)", stripped), line


def test_schedule_warmup_first_round_robin(small_study):
    messages = schedule.build(small_study, 2000)
    assert [m.warmup for m in messages] == [True, True] + [False] * 6
    publishers = sorted({m.publisher for m in messages})
    assert len(publishers) == 3
    assert [m.publisher for m in messages[2:5]] == [messages[2].publisher, messages[3].publisher, messages[4].publisher]
    assert len({m.msg_hash for m in messages}) == 8
    assert all(len(m.payload) == 2000 for m in messages)
    assert messages[1].publish_at_ns - messages[0].publish_at_ns == small_study.interval_ns


def test_rest_body_carries_the_hashed_fields(small_study):
    message = schedule.build(small_study, 2000)[0]
    body = json.loads(message.rest_body())
    payload = base64.b64decode(body["payload"])
    assert nwaku.message_hash(nwaku.PUBSUB_TOPIC, payload, body["contentTopic"], body["timestamp"]) == message.msg_hash
    assert body["timestamp"] == nwaku.SIMULATION_EPOCH_NS + small_study.bootstrap_ns


@pytest.mark.parametrize(
    "meta, expected",
    [
        (b"", "0xcccab07fed94181c83937c8ca8340c9108492b7ede354a6d95421ad34141fd37"),
        (b"super-secret", "0xb9b4852f9d8c489846e8bfc6c5ca6a1a8d460a40d28832a966e029eb39619199"),
    ],
)
def test_message_hash_matches_nwaku_vectors(meta, expected):
    # nwaku v0.36.0 tests/waku_core/test_message_digest.nim (RFC 14 deterministic hashing)
    digest = nwaku.message_hash(
        "/waku/2/rs/0/0",
        bytes.fromhex("010203045445535405060708"),
        "/waku/2/default-content/proto",
        0x175789BFA23F8400,
        meta=meta,
    )
    assert digest == expected


def test_render_writes_a_self_describing_run(small_study, tmp_path):
    run = plan.plan(small_study, 25000)
    run_folder.render(run, tmp_path, "bin/wakunode2", "/usr/bin/curl")
    config = yaml.safe_load((tmp_path / "shadow.yaml").read_text())

    assert config["general"]["stop_time"] == "58 s"
    assert config["experimental"] == {"shim_memory_syscalls": True}  # Shadow's own defaults otherwise
    assert config["network"]["graph"] == {"type": "gml", "file": {"path": "network.gml"}}
    hosts = config["hosts"]
    assert len(hosts) == 12
    ips = {h["ip_addr"] for h in hosts.values()}
    assert len(ips) == 12

    identities = pd.read_csv(tmp_path / "identities.csv")
    links = pd.read_csv(tmp_path / "links.csv")
    assert len(links) == 12 * 3
    publishers = set(identities.loc[identities["publisher"], "host"])
    assert len(publishers) == 3

    for name, host in hosts.items():
        node, *publishes = host["processes"]
        assert node["expected_final_state"] == "running"
        args = node["args"]
        static = [a.split("=", 1)[1] for a in args if a.startswith("--staticnode=")]
        dialled = set(links.loc[links["dialer"] == name, "dialed"])
        peer_ids = dict(zip(identities["host"], identities["peer_id"]))
        ip_of = dict(zip(identities["host"], identities["ip"]))
        # each dialled peer as a multiaddress on nwaku's TCP port: /ip4/<ip>/tcp/60000/p2p/<peer ID>
        assert static == [f"/ip4/{ip_of[d]}/tcp/60000/p2p/{peer_ids[d]}" for d in links.loc[links["dialer"] == name, "dialed"]]
        assert len(dialled) == 3
        assert ("--rest=true" in args) == (name in publishers)
        for off in ("--discv5-discovery=false", "--dns-discovery=false", "--peer-exchange=false",
                    "--metrics-server=false", "--store=false", "--log-format=JSON"):
            assert off in args
        assert node["environment"]["WAKU_SIM_PROOF_GENERATION_DELAY_NS"] == "150000000"
        assert node["environment"]["WAKU_SIM_VALIDATION_DELAY_NS"] == "12000000"
        assert "WAKU_SIM_GOSSIPSUB_D" not in node["environment"]
        for publish in publishes:
            assert name in publishers
            assert publish["path"] == "/usr/bin/curl"
            assert publish["expected_final_state"] == {"exited": 0}
            assert {"--retry-all-errors", "--fail-with-body", "Expect:"} <= set(publish["args"])
            body = publish["args"][publish["args"].index("--data-binary") + 1]
            assert (tmp_path / body.removeprefix("@").split("/")[-2] / body.split("/")[-1]).exists()

    sched = pd.read_csv(tmp_path / "schedule.csv")
    starts = sorted(p["start_time"] for h in hosts.values() for p in h["processes"][1:])
    assert len(starts) == len(sched) == 8
    assert int(sched["scheduled_ns"].iloc[0]) == 20 * 10**9


def test_gossipsub_degree_reaches_the_nodes(small_study, tmp_path):
    from waku_shadow.configuration import loader

    study = loader.resolve(merge(small_study.resolved, {"gossipsub": {"d": 8, "d_high": 12}}))
    env = nwaku.environment(study)
    assert env["WAKU_SIM_GOSSIPSUB_D"] == "8" and env["WAKU_SIM_GOSSIPSUB_D_HIGH"] == "12"
    assert "WAKU_SIM_GOSSIPSUB_D_LOW" not in env


def test_connection_limit_admits_every_inbound_link(small_study):
    limit = nwaku.max_connections(max_in_degree=45, max_out_degree=25)
    relay = -(-limit * 6 // 10)
    assert relay - relay // 3 >= 45
    # the 60 % relay share it assumes is passed, not left to the release's default (50 % since v0.38)
    me, *peers = plan.plan(small_study, 2000).identities[:3]
    assert "--relay-service-ratio=60:40" in nwaku.args(small_study, me, peers, rest=False, max_msg_size=1, connections=limit)


def test_nwaku_defaults_keep_nwakus_own_services(small_study):
    me, *peers = plan.plan(small_study, 2000).identities[:3]
    relay_only = nwaku.args(small_study, me, peers, rest=False, max_msg_size=1, connections=50)
    baseline_study = loader.resolve({**small_study.study_config(), "shadow": {"nwaku_services": "nwaku_defaults", "nwaku_log_level": "INFO"}})
    baseline = nwaku.args(baseline_study, me, peers, rest=False, max_msg_size=1, connections=50)
    assert set(relay_only) - set(baseline) == set(nwaku.RELAY_ONLY_FLAGS) | {"--log-level=NOTICE"}
    assert set(baseline) - set(relay_only) == {"--log-level=INFO"}


def test_shadow_experimental_options_reach_shadow(small_study, tmp_path):
    study = loader.resolve({**small_study.study_config(), "shadow": {"experimental": {"use_memory_manager": True, "use_object_counters": False}}})
    run_folder.render(plan.plan(study, 2000), tmp_path, "bin/wakunode2", "curl")
    assert yaml.safe_load((tmp_path / "shadow.yaml").read_text())["experimental"] == {
        "use_memory_manager": True, "use_object_counters": False, "shim_memory_syscalls": True}
    with pytest.raises(ConfigError, match=r"unknown key 'shadow.experimental.use_memory_manger' \(known keys here: use_memory_manager,"):
        loader.resolve({**small_study.study_config(), "shadow": {"experimental": {"use_memory_manger": True}}})


def rendered_experimental(small_study, tmp_path, **overrides):
    study = loader.resolve(merge(small_study.study_config(), overrides))
    return run_folder.shadow_yaml(plan.plan(study, 2000), tmp_path, "bin/wakunode2", "curl").get("experimental")


def test_patched_options_reach_shadow_only_when_on(small_study, tmp_path):
    """With both off nothing is rendered, so such a study runs on an unpatched Shadow."""
    unpatched = {"shim_memory_syscalls": False}
    assert rendered_experimental(small_study, tmp_path, network={"tcp_slow_start_after_idle": False}, shadow=unpatched) is None
    assert rendered_experimental(small_study, tmp_path, network={"tcp_slow_start_after_idle": True}, shadow=unpatched) == {
        "tcp_slow_start_after_idle": True}
    assert rendered_experimental(small_study, tmp_path, shadow={"experimental": {"use_memory_manager": True}}) == {
        "use_memory_manager": True, "shim_memory_syscalls": True}
    assert rendered_experimental(small_study, tmp_path, network={"tcp_slow_start_after_idle": True}) == {
        "tcp_slow_start_after_idle": True, "shim_memory_syscalls": True}


def test_patched_options_name_a_study_key_and_the_patch_that_adds_them():
    for option, (key, patch) in shadow_options.PATCHED_SHADOW_OPTIONS.items():
        section, name = key.split(".")
        assert name in schema.schema()["properties"][section]["properties"], key
        assert f"pub {option}: Option<bool>," in (REPO / patch).read_text(), (option, patch)


@pytest.mark.parametrize(
    "key, variable",
    [("nwaku_copy_once", nwaku.ENV_COPY_ONCE), ("nwaku_hash_once", nwaku.ENV_HASH_ONCE),
     ("nwaku_poll_once_per_burst", nwaku.ENV_POLL_ONCE_PER_BURST),
     ("nwaku_select_only_to_wait", nwaku.ENV_SELECT_ONLY_TO_WAIT),
     ("nwaku_rdhup_only_with_reader", nwaku.ENV_RDHUP_ONLY_WITH_READER),
     ("nwaku_null_cipher", nwaku.ENV_NULL_CIPHER),
     ("nwaku_stand_in_key_exchange", nwaku.ENV_STAND_IN_KEY_EXCHANGE),
     ("nwaku_without_health_loop", nwaku.ENV_WITHOUT_HEALTH_LOOP),
     ("nwaku_without_exception_traces", nwaku.ENV_WITHOUT_EXCEPTION_TRACES)],
)
def test_a_patch_setting_is_on_by_default_and_nwakus_own_behaviour_when_off(small_study, key, variable):
    assert nwaku.environment(small_study)[variable] == "1"
    study = loader.resolve({**small_study.study_config(), "shadow": {key: False}})
    assert variable not in nwaku.environment(study)


@pytest.mark.parametrize("modelled", [True, False])
def test_syscall_latency_model_reaches_shadow(small_study, tmp_path, modelled):
    study = loader.resolve({**small_study.study_config(), "shadow": {"model_unblocked_syscall_latency": modelled}})
    run_folder.render(plan.plan(study, 2000), tmp_path, "bin/wakunode2", "curl")
    assert yaml.safe_load((tmp_path / "shadow.yaml").read_text())["general"]["model_unblocked_syscall_latency"] is modelled


def test_nodes_built_with_malloc_return_large_freed_blocks(small_study):
    assert small_study.stack.nwaku_allocator == "malloc"  # the default
    assert nwaku.environment(small_study)["MALLOC_MMAP_THRESHOLD_"] == "131072"
    nim = loader.resolve({**small_study.study_config(), "stack": {"nwaku": {"allocator": "nim"}}})
    assert "MALLOC_MMAP_THRESHOLD_" not in nwaku.environment(nim)
    with pytest.raises(ConfigError, match="allocator: malloc needs memory_manager orc"):
        loader.resolve({**small_study.study_config(), "stack": {"nwaku": {"memory_manager": "refc"}}})


def test_the_mmap_threshold_reaches_the_nodes_within_what_glibc_accepts(small_study):
    def with_threshold(value):
        return loader.resolve({**small_study.study_config(), "shadow": {"nwaku_mmap_threshold": value}})

    assert nwaku.environment(with_threshold("1 MiB"))["MALLOC_MMAP_THRESHOLD_"] == "1048576"
    with pytest.raises(ConfigError, match=r"shadow.nwaku_mmap_threshold: 64 MiB is more than glibc accepts \(32 MiB\)"):
        with_threshold("64 MiB")
    with pytest.raises(ConfigError, match="shadow.nwaku_mmap_threshold: must be more than 0"):
        with_threshold("0 KiB")


@pytest.mark.parametrize("muxer", ["mplex", "yamux"])
def test_the_stream_muxer_reaches_the_nodes_only_when_chosen(small_study, muxer):
    from waku_shadow.configuration import loader

    assert nwaku.ENV_STREAM_MUXER not in nwaku.environment(small_study)  # nwaku's own order
    study = loader.resolve(merge(small_study.resolved, {"libp2p": {"stream_muxer": muxer}}))
    assert nwaku.environment(study)[nwaku.ENV_STREAM_MUXER] == muxer


def test_each_size_runs_on_its_own_link(small_study, tmp_path):
    study = loader.resolve(merge(small_study.resolved, {"by_size": {"2 KB": {"network": {"latency": "75 ms"}}}}))
    assert study.latency_ns == 50_000_000 and study.by_size == {2000: {"network": {"latency": "75 ms"}}}
    for size, latency in ((2000, "75 ms"), (25000, "50 ms")):
        run = loader.resolve(study.run_config(f"n12-size{size}B-seed7"))
        assert run.by_size == {}  # the run's config holds its size's settings, and no other size's
        run_folder.render(plan.plan(run, size), tmp_path / str(size), "/bin/wakunode2", "/usr/bin/curl")
        assert f'latency "{latency}"' in (tmp_path / str(size) / "network.gml").read_text()


def test_the_shipped_paper_reading_runs_2_kb_on_75_ms_and_the_rest_on_150():
    study = loader.load(CONFIGS / "paper-calibrated.yaml")
    latencies = {run: loader.resolve(study.run_config(run)).latency_ns / 1e6 for run in study.run_ids()}
    assert latencies == {f"n1000-size{size}B-seed{seed}": (75 if size == 2000 else 150)
                         for size in (2000, 25000, 100000, 500000) for seed in (1, 2, 3)}


def test_the_prune_fix_reaches_the_nodes_only_when_chosen(small_study):
    assert nwaku.ENV_PRUNE_ONLY_REMOVED not in nwaku.environment(small_study)  # nim-libp2p as it ships
    study = loader.resolve(merge(small_study.resolved, {"gossipsub": {"prune_only_removed": True}}))
    assert nwaku.environment(study)[nwaku.ENV_PRUNE_ONLY_REMOVED] == "1"


def test_relays_without_rest_are_subscribed_by_patch_0004_only_where_the_tag_has_it(small_study):
    assert small_study.stack.nwaku_tag == "v0.38.1"  # subscribes through its delivery service
    assert nwaku.ENV_RELAY_WITHOUT_REST not in nwaku.environment(small_study)
    older = loader.resolve(merge(small_study.resolved, {"stack": {"nwaku": {"tag": "v0.37.1-beta"}}}))
    assert nwaku.environment(older)[nwaku.ENV_RELAY_WITHOUT_REST] == "1"


def test_subscribing_before_the_dials_reaches_the_nodes_only_when_chosen(small_study):
    assert nwaku.ENV_SUBSCRIBE_BEFORE_DIALS not in nwaku.environment(small_study)  # v0.38.1: after the dials
    study = loader.resolve(merge(small_study.resolved, {"gossipsub": {"subscribe_before_dials": True}}))
    assert nwaku.environment(study)[nwaku.ENV_SUBSCRIBE_BEFORE_DIALS] == "1"


def test_sequential_dials_reach_the_nodes_only_when_chosen(small_study):
    assert nwaku.ENV_SEQUENTIAL_DIALS not in nwaku.environment(small_study)  # nwaku dials all at once
    study = loader.resolve(merge(small_study.resolved, {"libp2p": {"sequential_dials": True}}))
    assert nwaku.environment(study)[nwaku.ENV_SEQUENTIAL_DIALS] == "1"


def test_the_publishing_switches_reach_the_nodes_only_when_chosen(small_study):
    switches = (nwaku.ENV_FLOOD_PUBLISH, nwaku.ENV_FLOOD_PUBLISH_BANDWIDTH_BPS, nwaku.ENV_IDONTWANT_ON_PUBLISH)
    assert not set(switches) & set(nwaku.environment(small_study))  # gossipsub as nwaku sets it
    study = loader.resolve(merge(small_study.resolved, {"gossipsub": {
        "flood_publish": False, "flood_publish_bandwidth": "20 Mbit", "idontwant_on_publish": True}}))
    assert [nwaku.environment(study)[name] for name in switches] == ["0", "20000000", "1"]
    flooding = loader.resolve(merge(small_study.resolved, {"gossipsub": {"flood_publish": True}}))
    assert nwaku.environment(flooding)[nwaku.ENV_FLOOD_PUBLISH] == "1"


def test_the_preamble_is_a_build_of_its_own(small_study):
    from waku_shadow.stack import builds

    study = loader.resolve(merge(small_study.resolved, {"gossipsub": {"preamble": True}}))
    assert study.stack.nwaku_make_flags == (*small_study.stack.nwaku_make_flags, "NIMFLAGS=-d:libp2p_gossipsub_1_4")
    names = {builds.nwaku_build_name("v0.37.1-beta", "orc", "malloc", [], s.stack.nwaku_make_flags) for s in (small_study, study)}
    assert len(names) == 2
