import pytest
import yaml
from conftest import CONFIGS, OVERLAYS, REPO

from waku_shadow.configuration import loader, schema, sources
from waku_shadow.configuration.study import merge
from waku_shadow.errors import ConfigError


@pytest.mark.parametrize("name", ["default", "paper", "paper-calibrated", "research-issue", "load"])
def test_shipped_configs_are_valid(name):
    study = loader.load(CONFIGS / f"{name}.yaml")
    assert study.name == name
    assert study.run_ids()


@pytest.mark.parametrize(
    "overlay, changed",
    [
        ("baseline", {"nwaku_services": "nwaku_defaults", "nwaku_log_level": "INFO", "nwaku_copy_once": False,
                      "nwaku_hash_once": False, "nwaku_poll_once_per_burst": False, "nwaku_null_cipher": False,
                      "nwaku_select_only_to_wait": False, "nwaku_stand_in_key_exchange": False,
                      "nwaku_without_health_loop": False, "nwaku_without_exception_traces": False,
                      "shim_memory_syscalls": False}),
        ("uncut", {"nwaku_copy_once": False, "nwaku_hash_once": False, "nwaku_poll_once_per_burst": False,
                   "nwaku_select_only_to_wait": False, "nwaku_null_cipher": False,
                   "nwaku_stand_in_key_exchange": False, "nwaku_without_health_loop": False,
                   "nwaku_without_exception_traces": False, "shim_memory_syscalls": False}),
        ("unpatched-shadow", {"shim_memory_syscalls": False}),
        ("encrypted", {"nwaku_null_cipher": False}),
        ("select-after-wake", {"nwaku_select_only_to_wait": False}),
        ("x25519", {"nwaku_stand_in_key_exchange": False}),
        ("health-loop", {"nwaku_without_health_loop": False}),
        ("exception-traces", {"nwaku_without_exception_traces": False}),
        ("syscall-latency", {"model_unblocked_syscall_latency": True}),
        ("short-drain", {"drain_ns": 3_000_000_000, "stop_time_ns": 68_000_000_000}),
        ("slow-start-after-idle", {"tcp_slow_start_after_idle": True}),
    ],
)
def test_shipped_overlays_change_only_what_they_say(overlay, changed):
    paper = loader.load(CONFIGS / "paper.yaml")
    laid_over = loader.load(CONFIGS / "paper.yaml", OVERLAYS / f"{overlay}.yaml")
    differing = {key for key in ("nwaku_services", "nwaku_log_level", "nwaku_copy_once", "nwaku_hash_once",
                                 "nwaku_poll_once_per_burst", "nwaku_select_only_to_wait", "nwaku_null_cipher",
                                 "nwaku_stand_in_key_exchange", "nwaku_without_health_loop", "nwaku_without_exception_traces",
                                 "model_unblocked_syscall_latency", "drain_ns", "stop_time_ns", "resources",
                                 "tcp_slow_start_after_idle", "shim_memory_syscalls")
                 if getattr(paper, key) != getattr(laid_over, key)}
    assert differing == set(changed)
    assert {key: getattr(laid_over, key) for key in changed} == changed


def test_shadow_glibc_overlay_changes_only_shadows_malloc():
    paper = loader.load(CONFIGS / "paper.yaml")
    laid_over = loader.load(CONFIGS / "paper.yaml", OVERLAYS / "shadow-glibc.yaml")
    assert (paper.stack.shadow_allocator, laid_over.stack.shadow_allocator) == ("auto", "glibc")
    assert laid_over.study_config() == paper.study_config()  # a machine setting: no run is due again


def test_shadows_allocator_is_a_name_or_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as refused:
        loader.resolve({"study": "x", "stack": {"shadow": {"allocator": "tcmalloc"}}})
    assert "stack.shadow.allocator: 'tcmalloc' is none of auto, glibc, jemalloc" in str(refused.value)
    study = loader.resolve({"study": "x", "stack": {"shadow": {"allocator": "lib/libmymalloc.so"}}})
    assert study.stack.shadow_allocator == str(tmp_path / "lib" / "libmymalloc.so")


def test_ten_publishers_overlay_changes_only_the_publishers():
    paper = loader.load(CONFIGS / "paper.yaml").study_config()
    text_reading = loader.load(CONFIGS / "paper.yaml", OVERLAYS / "paper-ten-publishers.yaml").study_config()
    assert text_reading.pop("study") == "paper-ten-publishers"
    assert text_reading["traffic"].pop("publishers") == 10
    assert text_reading["traffic"].pop("messages_per_publisher") == 1
    assert text_reading["traffic"].pop("warmup_messages") == 2
    paper.pop("study")
    del paper["traffic"]["publishers"], paper["traffic"]["messages_per_publisher"], paper["traffic"]["warmup_messages"]
    assert text_reading == paper


def test_merge_pages_overlay_asks_for_merged_pages():
    assert not loader.load(CONFIGS / "paper.yaml").resources.merge_identical_pages
    assert loader.load(CONFIGS / "paper.yaml", OVERLAYS / "merge-pages.yaml").resources.merge_identical_pages


def test_paper_config_is_the_papers_study():
    study = loader.load(CONFIGS / "paper.yaml")
    assert (study.nodes, study.peers_per_node, study.gossipsub.effective()["d"]) == (1000, 25, 6)
    assert study.latency_ns == 150_000_000
    assert (study.bandwidth_up_bps, study.bandwidth_down_bps) == (100_000_000, 100_000_000)
    assert study.message_sizes == (2000, 25000, 100000, 500000)
    assert (study.publishers, study.messages_per_publisher, study.warmup_messages) == (1, 9, 1)
    assert (study.rln.proof_generation_ns, study.rln.verification_ns) == (150_000_000, 12_000_000)


def test_default_config_states_every_key_with_its_default():
    """configs/default.yaml shows every study key (machine sections live in local.yaml), each with the
    value the schema gives a study that leaves it out."""
    written = yaml.safe_load((CONFIGS / "default.yaml").read_text())
    defaults = loader.resolve({"study": "default"}).study_config()
    assert written.keys() == defaults.keys()
    for section, values in defaults.items():
        if isinstance(values, dict):
            assert written[section].keys() == values.keys(), section
    assert loader.load(CONFIGS / "default.yaml").study_config() == defaults


def test_slow_start_after_idle_is_upstream_shadows_behaviour_unless_asked(small_study):
    spec = schema.schema()["properties"]["network"]["properties"]["tcp_slow_start_after_idle"]
    assert spec["type"] == "boolean" and spec["default"] is False
    assert "shadow/patches/0001-tcp-slow-start-after-idle.patch" in spec["description"]
    assert small_study.tcp_slow_start_after_idle is False
    asked = loader.resolve(merge(small_study.study_config(), {"network": {"tcp_slow_start_after_idle": True}}))
    assert asked.tcp_slow_start_after_idle is True


def test_stop_time_is_derived_from_the_schedule(small_study):
    # 2 warm-up + 3 publishers x 2 messages, every 4 s after a 20 s bootstrap, then 10 s drain
    assert small_study.messages_per_run == 8
    assert small_study.last_publish_ns == (20 + 7 * 4) * 10**9
    assert small_study.stop_time_ns == (20 + 7 * 4 + 10) * 10**9


@pytest.mark.parametrize(
    "override, message",
    [
        ({"netwrk": {}}, "unknown key 'netwrk'"),
        ({"network": {"nodes": 10, "peer_per_node": 3}}, "unknown key 'network.peer_per_node'"),
        ({"network": {"nodes": 10, "peers_per_node": 10}}, "network.peers_per_node: 10 must be less than network.nodes (10)"),
        ({"network": {"nodes": 1}}, "network.nodes: 1 is less than the minimum of 2"),
        ({"network": {"latency": "150"}}, "network.latency: cannot read '150'"),
        ({"network": {"packet_loss": 1.5}}, "network.packet_loss: 1.5 is greater than the maximum of 1"),
        ({"traffic": {"publishers": 100}}, "traffic.publishers: 100 is more than network.nodes (50)"),
        ({"traffic": {"message_sizes": ["2 KB", "2000 B"]}}, "traffic.message_sizes: ['2 KB', '2000 B'] repeats a size"),
        ({"traffic": {"interval": "0 s"}}, "traffic.interval: must be longer than 0"),
        ({"gossipsub": {"d": 3}}, "gossipsub: need d_low <= d <= d_high, got d_low=4, d=3, d_high=8"),
        ({"rln": {"platform": "Commodore 64"}}, "rln.platform: 'Commodore 64' is not in the paper's Table 1"),
        ({"rln": {"platform": "Raspberry Pi 4B 4GB", "verification": "1 ms"}}, "rln.platform: 'Raspberry Pi 4B 4GB' sets the delays; remove rln.verification"),
        ({"shadow": {"stop_time": "30 s"}}, "shadow.stop_time: 30 s ends before the last publish"),
        ({"shadow": {"nwaku_log_level": "WARN"}}, "shadow.nwaku_log_level: 'WARN' is not one of"),
        ({"study": "has space"}, "study: 'has space' does not match"),
        ({"network": {"tcp_slow_start_after_idle": "yes"}}, "network.tcp_slow_start_after_idle: 'yes' is not of type 'boolean'"),
        ({"network": {"tcp_slow_start_after_idle": True}, "shadow": {"experimental": {"use_new_tcp": True}}},
         "network.tcp_slow_start_after_idle: only Shadow's legacy TCP has it"),
    ],
)
def test_bad_configs_name_the_problem(override, message):
    raw = merge({"study": "bad"}, override)
    with pytest.raises(ConfigError) as error:
        loader.resolve(raw, source="bad.yaml")
    assert any(line.strip().startswith(f"bad.yaml: {message}") for line in str(error.value).splitlines()), str(error.value)


def test_platform_sets_both_delays():
    study = loader.resolve({"study": "x", "rln": {"platform": "Digital Ocean 8GB/4CPU", "proof_generation": None, "verification": None}})
    assert (study.rln.proof_generation_ns, study.rln.verification_ns) == (276_300_000, 4_500_000)


def test_size_dependent_verification():
    study = loader.resolve({"study": "x", "rln": {"verification": "4 ms", "verification_per_byte": "25 ns"}})
    assert study.rln.verification_delay_ns(500_000) == 4_000_000 + 12_500_000


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="no such config file"):
        loader.load(tmp_path / "nope.yaml")


def test_local_config_holds_only_machine_sections(tmp_path):
    local = tmp_path / "local.yaml"
    local.write_text("stack:\n  curl: /usr/bin/curl\nnetwork:\n  nodes: 3\n")
    with pytest.raises(ConfigError, match="move 'network' into the study config"):
        sources.read_local(local)


def test_snakemake_config_falls_back_to_default_and_merges_local(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    local = tmp_path / "local.yaml"
    local.write_text("stack:\n  shadow:\n    binary: tools/shadow/bin/shadow\n")
    study = sources.study_from_snakemake({}, local_path=local)
    assert study.name == "default"
    assert study.stack.shadow_binary == str(tmp_path / "tools/shadow/bin/shadow")
    paper = sources.study_from_snakemake(yaml.safe_load((CONFIGS / "paper.yaml").read_text()), local_path=local)
    assert paper.nodes == 1000 and paper.stack.shadow_binary == str(tmp_path / "tools/shadow/bin/shadow")


def test_run_config_has_one_size(small_study):
    run = small_study.run_config("n12-size25000B-seed7")
    assert run["traffic"]["message_sizes"] == [25000]
    assert loader.resolve(run).run_ids() == ["n12-size25000B-seed7"]


def test_unknown_run_is_named(small_study):
    with pytest.raises(ConfigError, match="run 'n12-size1B-seed7' is not part of study 'unit'"):
        small_study.run("n12-size1B-seed7")


def sweep_study(**overrides):
    raw = {
        "study": "sweep",
        "seed": 3,
        "repetitions": 2,
        "sweep": {"parameter": "gossipsub.d", "values": [3, 10]},
        "network": {"nodes": 16, "peers_per_node": 4, "latency": "50 ms"},
        "traffic": {"message_sizes": ["1 B", "10 KB"]},
    }
    return loader.resolve(merge(raw, overrides))


def test_sweep_expands_to_one_run_per_value_size_and_seed():
    study = sweep_study()
    assert study.run_ids() == [
        f"d{d}-n16-size{size}B-seed{seed}" for d in (3, 10) for size in (1, 10000) for seed in (3, 4)
    ]
    run = study.run("d10-n16-size1B-seed4")
    assert (run.value, run.size_bytes, run.seed) == (10, 1, 4)


def test_a_sweep_point_is_a_study_of_one_run():
    study = sweep_study()
    point = loader.resolve(study.run_config("d3-n16-size10000B-seed4"))
    assert point.run_ids() == ["d3-n16-size10000B-seed4"]
    # d_low and d_high follow d with nwaku's offsets, d_low at least 1
    assert point.gossipsub.effective() == {"d": 3, "d_low": 1, "d_high": 5, "d_lazy": 6}
    assert (point.seed, point.repetitions, point.message_sizes) == (4, 1, (10000,))
    # the run folder's config resolves to the same run again
    assert loader.resolve(point.resolved).run_ids() == point.run_ids()


def test_sweeping_other_parameters():
    study = sweep_study(sweep={"parameter": "traffic.messages_per_publisher", "values": [1, 16]}, repetitions=1)
    point = loader.resolve(study.run_config("messages_per_publisher16-n16-size1B-seed3"))
    assert point.messages_per_publisher == 16
    assert point.gossipsub.effective()["d"] == 6


def test_sweeping_the_interval_sweeps_the_load_in_milliseconds(tmp_path):
    study = sweep_study(sweep={"parameter": "traffic.interval", "values": [1000, 20]}, repetitions=1)
    assert study.run_ids()[-1] == "interval_ms20-n16-size10000B-seed3"
    point = loader.resolve(study.run_config("interval_ms20-n16-size10000B-seed3"))
    assert point.interval_ns == 20_000_000
    assert point.stop_time_ns == point.bootstrap_ns + (point.messages_per_run - 1) * 20_000_000 + point.drain_ns
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(study.run_config("interval_ms20-n16-size10000B-seed3")))
    assert loader.load(path).interval_ns == 20_000_000  # the run folder's config loads again


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"gossipsub": {"d": 6}}, r"gossipsub.d: sweep.values sets it; remove the key"),
        ({"sweep": {"parameter": "traffic.interval", "values": [100]}, "traffic": {"interval": "1 s"}},
         r"traffic.interval: sweep.values sets it; remove the key"),
        ({"gossipsub": {"d_high": 8}}, r"sweep.values: gossipsub.d = 10: gossipsub: need d_low <= d <= d_high"),
        ({"sweep": {"parameter": "network.peers_per_node", "values": [4, 16]}, "network": {"peers_per_node": None}},
         r"sweep.values: network.peers_per_node = 16: network.peers_per_node: 16 must be less than network.nodes \(16\)"),
        ({"sweep": {"parameter": "network.nodes", "values": [40]}}, r"network.nodes: sweep.values sets it; remove the key"),
        ({"repetitions": 0}, r"repetitions: 0 is less than the minimum of 1"),
    ],
)
def test_bad_sweeps_are_named(overrides, message):
    with pytest.raises(ConfigError, match=message):
        sweep_study(**overrides)


def nodes_sweep(values: list[int]):
    return loader.resolve({"study": "scaling-test", "sweep": {"parameter": "network.nodes", "values": values},
                           "network": {"peers_per_node": 10}, "traffic": {"message_sizes": ["2 KB"]}})


def test_a_sweep_of_nodes_names_each_run_by_its_n(tmp_path):
    study = nodes_sweep([20, 40])
    assert study.run_ids() == ["n20-size2000B-seed1", "n40-size2000B-seed1"]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(study.run_config("n40-size2000B-seed1")))
    assert loader.load(path).nodes == 40
    with pytest.raises(ConfigError, match=r"sweep.values: network.nodes = 8: network.peers_per_node: 10 must be less than network.nodes \(8\)"):
        nodes_sweep([40, 8])


def test_a_sweep_overrides_the_key_of_the_study_it_extends(tmp_path, monkeypatch):
    path = tmp_path / "scaling.yaml"
    path.write_text("study: scaling-test\nextends: paper\nsweep: {parameter: network.nodes, values: [30, 60]}\n"
                    "traffic: {message_sizes: [2 KB]}\n")
    study = loader.load(path)
    assert study.run_ids() == ["n30-size2000B-seed1", "n60-size2000B-seed1"]
    path.write_text(path.read_text() + "network: {nodes: 1000}\n")
    with pytest.raises(ConfigError, match=r"network.nodes: sweep.values sets it; remove the key"):
        loader.load(path)


def test_a_config_that_runs_other_sizes_leaves_the_extended_studys_by_size_of_the_rest(tmp_path):
    path = tmp_path / "calibrated-100kb.yaml"
    path.write_text("study: calibrated-100kb\nextends: paper-calibrated\ntraffic: {message_sizes: [100 KB]}\n")
    study = loader.load(path)
    assert study.run_ids() == [f"n1000-size100000B-seed{seed}" for seed in (1, 2, 3)]
    assert loader.load(path).latency_ns == 150_000_000  # the 2 KB run's 75 ms link is not taken
    path.write_text("study: calibrated-2kb\nextends: paper-calibrated\ntraffic: {message_sizes: [2 KB]}\n")
    run = loader.load(path)
    assert loader.resolve(run.run_config(run.run_ids()[0])).latency_ns == 75_000_000


def test_a_resolved_sweep_study_loads_again(tmp_path):
    """The workflow writes the resolved study (defaults filled in) and reads it back."""
    for study in (sweep_study(), sweep_study(sweep={"parameter": "traffic.messages_per_publisher", "values": [1, 16]})):
        path = tmp_path / "study.yaml"
        path.write_text(loader.dump_study(study))
        assert loader.load(path).run_ids() == study.run_ids()
        run = study.run_ids()[-1]
        path.write_text(yaml.safe_dump(study.run_config(run)))
        assert loader.load(path).run_ids() == [run]


def test_machine_paths_are_absolute_where_the_config_is_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    study = loader.resolve({
        "study": "paths",
        "stack": {"shadow": {"binary": "build/shadow/bin/shadow"},
                  "nwaku": {"source": "~/nwaku", "path_prepend": ["~/nim/bin"]}, "curl": "~/bin/curl"},
        "resources": {"results_dir": "~/results"},
    })
    assert study.stack.shadow_binary == str(tmp_path / "build" / "shadow" / "bin" / "shadow")
    assert study.stack.nwaku_source == str(tmp_path / "home" / "nwaku")
    assert study.stack.nwaku_path_prepend == (str(tmp_path / "home" / "nim" / "bin"),)
    assert study.stack.curl == str(tmp_path / "home" / "bin" / "curl")
    assert study.resources.results_dir == str(tmp_path / "home" / "results")
    assert loader.resolve({"study": "paths"}).stack.curl == "curl"  # a command name stays one


def test_every_schema_problem_is_named_at_once():
    with pytest.raises(ConfigError) as error:
        loader.resolve({"study": "x", "netwrk": {}, "network": {"nodes": 0, "peer_per_node": 3}, "seed": "one"})
    lines = str(error.value).splitlines()
    assert lines[0] == "4 problems:"
    assert sorted(lines[1:]) == [
        "  config: network.nodes: 0 is less than the minimum of 2",
        "  config: seed: 'one' is not of type 'integer'",
        "  config: unknown key 'network.peer_per_node' (known keys here: "
        + ", ".join(schema.schema()["properties"]["network"]["properties"]) + ")",
        "  config: unknown key 'netwrk' (known keys here: " + ", ".join(schema.schema()["properties"]) + ")",
    ]


def test_a_typo_in_the_local_config_is_named_there(tmp_path):
    local = tmp_path / "local.yaml"
    local.write_text("resources:\n  memory_flor: 2 GiB\n")
    with pytest.raises(ConfigError, match=rf"^{local}: unknown key 'resources.memory_flor' \(known keys here: memory_floor,"):
        sources.study_from_snakemake({}, local_path=local)


def test_each_problem_is_named_with_the_layer_that_set_its_key():
    layers = [
        loader.Layer("configs/default.yaml", {"study": "x", "network": {"nodes": 10, "peers_per_node": 3}}),
        loader.Layer("mine.yaml", {"network": {"latency": "5 parsecs"}, "traffic": {"message_sizes": ["2 KB", "2 KB"]}}),
        loader.Layer("--config", {"network": {"nodes": 3}}),
    ]
    with pytest.raises(ConfigError) as error:
        loader.resolve_layers(layers)
    assert str(error.value).splitlines()[1:] == [
        "  configs/default.yaml: network.peers_per_node: 3 must be less than network.nodes (3)",
        "  the default: traffic.publishers: 5 is more than network.nodes (3)",
        "  mine.yaml: traffic.message_sizes: ['2 KB', '2 KB'] repeats a size",
        "  mine.yaml: network.latency: cannot read '5 parsecs' as a duration; use a number and one of the units "
        "ns, us, µs, ms, s, sec, min (e.g. '150 ms')",
    ]


@pytest.mark.parametrize("topology, nodes, d, most", [("random", 8, 12, "a node of 8 has at most 7 peers"),
                                                      ("cascade", 5, 3, "a cascade's node has 2 peers")])
def test_a_d_no_node_can_reach_is_refused(topology, nodes, d, most):
    network = {"nodes": nodes, "topology": topology, **({"peers_per_node": 3} if topology == "random" else {})}
    with pytest.raises(ConfigError, match=rf"^config: gossipsub.d: {d} mesh peers cannot exist: {most}$"):
        loader.resolve({"study": "x", "network": network, "gossipsub": {"d": d, "d_low": 1, "d_high": d + 2},
                     "traffic": {"publishers": 1}})
    # nwaku's own D (unset) is not the study's claim: a small network simply has a smaller mesh
    assert loader.resolve({"study": "x", "network": network, "traffic": {"publishers": 1}}).gossipsub.d is None


def test_command_line_config_values_are_read_as_yaml():
    class Settings:
        configfiles = [CONFIGS / "paper.yaml"]
        config_args = ["network={nodes: 30, latency: 10 ms}", "seed=3", "traffic={message_sizes: [2 KB]}"]
        config = {}
    layers = sources.command_line_layers(Settings)
    assert [layer.source for layer in layers] == [str(CONFIGS / "paper.yaml"), "--config"]
    assert layers[1].values == {"network": {"nodes": 30, "latency": "10 ms"}, "seed": 3, "traffic": {"message_sizes": ["2 KB"]}}
    study = sources.study_from_snakemake({}, Settings, local_path=CONFIGS / "no-such-local.yaml")
    assert (study.name, study.nodes, study.latency_ns, study.seed) == ("paper", 30, 10_000_000, 3)


def test_by_size_names_what_is_wrong_with_a_size_s_settings():
    with pytest.raises(ConfigError) as error:
        loader.resolve({"study": "x", "traffic": {"message_sizes": ["2 KB", "25 KB"]},
                     "sweep": {"parameter": "gossipsub.d", "values": [4, 6]},
                     "by_size": {"3 KB": {"network": {"latency": "75 ms"}}, "2 KB": {"network": {"nodes": 3}},
                                 "25 KB": {"gossipsub": {"d": 8}}, "25000 B": {"network": {"latency": "5 parsecs"}}}})
    assert str(error.value).splitlines()[1:] == [
        "  config: by_size.3 KB: 3 KB is not one of traffic.message_sizes",
        "  config: by_size.2 KB: network.nodes is the study's, for every size",
        "  config: by_size.25 KB: gossipsub.d is swept; it cannot also differ by size",
        "  config: by_size.25000 B: network.latency: cannot read '5 parsecs' as a duration; use a number and one of "
        "the units ns, us, µs, ms, s, sec, min (e.g. '150 ms')",
    ]


def test_a_setting_the_tags_patches_do_not_read_is_refused():
    with pytest.raises(ConfigError, match=r"^config: libp2p.stream_muxer: nwaku v0.36.0 does not read it: "
                                          r"nwaku-patches/v0.36.0/ has no patch 0013$"):
        loader.resolve({"study": "x", "libp2p": {"stream_muxer": "mplex"}, "stack": {"nwaku": {"tag": "v0.36.0"}}})
    assert loader.resolve({"study": "x", "libp2p": {"stream_muxer": "mplex"}}).stream_muxer == "mplex"


def test_the_publishing_switches_need_a_tag_whose_patches_read_them():
    with pytest.raises(ConfigError) as refused:
        loader.resolve({"study": "x", "stack": {"nwaku": {"tag": "v0.36.0"}},
                        "gossipsub": {"flood_publish": False, "flood_publish_bandwidth": "20 Mbit",
                                      "idontwant_on_publish": True, "preamble": True}})
    assert str(refused.value).splitlines()[1:] == [
        f"  config: gossipsub.{key}: nwaku v0.36.0 does not read it: nwaku-patches/v0.36.0/ has no patch 0016"
        for key in ("flood_publish", "flood_publish_bandwidth", "idontwant_on_publish", "preamble")]


def test_a_flood_publish_bandwidth_is_a_positive_rate():
    with pytest.raises(ConfigError, match=r"^config: gossipsub.flood_publish_bandwidth: "):
        loader.resolve({"study": "x", "gossipsub": {"flood_publish_bandwidth": "fast"}})
    assert loader.resolve({"study": "x", "gossipsub": {"flood_publish_bandwidth": "20 Mbit"}}).flood_publish_bandwidth_bps == 20_000_000


def test_the_preamble_build_is_refused_on_master():
    with pytest.raises(ConfigError, match=r"^config: gossipsub.preamble: nwaku master-69fbffa3a builds nim-libp2p 2.0, "):
        loader.resolve({"study": "x", "gossipsub": {"preamble": True}, "stack": {"nwaku": {"tag": "master-69fbffa3a"}}})
    assert loader.resolve({"study": "x", "gossipsub": {"idontwant_on_publish": True},
                           "stack": {"nwaku": {"tag": "master-69fbffa3a"}}}).idontwant_on_publish


def test_the_preamble_cannot_come_from_a_prebuilt_binary(tmp_path):
    with pytest.raises(ConfigError, match=r"^config: gossipsub.preamble: it is a build of its own"):
        loader.resolve({"study": "x", "gossipsub": {"preamble": True},
                        "stack": {"nwaku": {"binary": str(tmp_path / "wakunode2")}}})


def test_a_tag_without_a_patch_folder_is_one_error_naming_the_supported_tags():
    # nwaku-patches/nim/ patches Nim's lib, not an nwaku tag
    supported = ", ".join(sorted(d.name for d in (REPO / "nwaku-patches").iterdir() if d.is_dir() and d.name != "nim"))
    with pytest.raises(ConfigError) as refused:
        loader.resolve({"study": "x", "stack": {"nwaku": {"tag": "v0.99.0"}}})
    assert str(refused.value) == (f"config: stack.nwaku.tag: v0.99.0 has no patch folder nwaku-patches/v0.99.0/; "
                                  f"supported: {supported}")


def test_the_stall_timeout_is_a_positive_duration_or_never():
    assert loader.resolve({"study": "x"}).resources.stall_timeout_ns == 20 * 60 * 10**9
    assert loader.resolve({"study": "x", "resources": {"stall_timeout": None}}).resources.stall_timeout_ns is None
    with pytest.raises(ConfigError, match="resources.stall_timeout"):
        loader.resolve({"study": "x", "resources": {"stall_timeout": "0 s"}})
