import pytest
import yaml

from waku_shadow import config as cfg
from waku_shadow import pipeline
from waku_shadow.errors import ConfigError

from conftest import CONFIGS


@pytest.mark.parametrize("name", ["default", "paper", "paper-calibrated", "research-issue"])
def test_shipped_configs_are_valid(name):
    study = cfg.load(CONFIGS / f"{name}.yaml")
    assert study.name == name
    assert study.run_ids()


def test_paper_config_is_the_papers_study():
    study = cfg.load(CONFIGS / "paper.yaml")
    assert (study.nodes, study.peers_per_node, study.gossipsub.effective()["d"]) == (1000, 25, 6)
    assert study.latency_ns == 150_000_000
    assert (study.bandwidth_up_bps, study.bandwidth_down_bps) == (100_000_000, 100_000_000)
    assert study.message_sizes == (2000, 25000, 100000, 500000)
    assert (study.publishers, study.messages_per_publisher, study.warmup_messages) == (10, 1, 2)
    assert (study.rln.proof_generation_ns, study.rln.verification_ns) == (150_000_000, 12_000_000)


def test_default_config_states_every_key():
    """configs/default.yaml shows every study key (machine sections live in local.yaml)."""
    written = yaml.safe_load((CONFIGS / "default.yaml").read_text())
    schema_props = cfg.schema()["properties"]
    for section, spec in schema_props.items():
        if section in cfg.MACHINE_SECTIONS:
            continue
        assert section in written, section
        for key in spec.get("properties", {}):
            assert key in written[section], f"{section}.{key}"


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
        ({"traffic": {"message_sizes": ["2 KB", "2000 B"]}}, "repeats a size"),
        ({"traffic": {"interval": "0 s"}}, "traffic.interval: must be longer than 0"),
        ({"gossipsub": {"d": 3}}, "gossipsub: need d_low <= d <= d_high, got d_low=4, d=3, d_high=8"),
        ({"rln": {"platform": "Commodore 64"}}, "rln.platform: 'Commodore 64' is not in the paper's Table 1"),
        ({"rln": {"platform": "Raspberry Pi 4B 4GB", "verification": "1 ms"}}, "remove rln.verification"),
        ({"shadow": {"stop_time": "30 s"}}, "shadow.stop_time: 30 s ends before the last publish"),
        ({"shadow": {"nwaku_log_level": "WARN"}}, "shadow.nwaku_log_level: 'WARN' is not one of"),
        ({"study": "has space"}, "study: 'has space' does not match"),
    ],
)
def test_bad_configs_name_the_problem(override, message):
    raw = cfg.merge({"study": "bad"}, override)
    with pytest.raises(ConfigError) as error:
        cfg.resolve(raw, source="bad.yaml")
    assert str(error.value).startswith("bad.yaml: ")
    assert message in str(error.value)


def test_platform_sets_both_delays():
    study = cfg.resolve({"study": "x", "rln": {"platform": "Digital Ocean 8GB/4CPU", "proof_generation": None, "verification": None}})
    assert (study.rln.proof_generation_ns, study.rln.verification_ns) == (276_300_000, 4_500_000)


def test_size_dependent_verification():
    study = cfg.resolve({"study": "x", "rln": {"verification": "4 ms", "verification_per_byte": "25 ns"}})
    assert study.rln.verification_delay_ns(500_000) == 4_000_000 + 12_500_000


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="no such config file"):
        cfg.load(tmp_path / "nope.yaml")


def test_local_config_holds_only_machine_sections(tmp_path):
    local = tmp_path / "local.yaml"
    local.write_text("stack:\n  curl: /usr/bin/curl\nnetwork:\n  nodes: 3\n")
    with pytest.raises(ConfigError, match="move 'network' into the study config"):
        pipeline.read_local(local)


def test_snakemake_config_falls_back_to_default_and_merges_local(tmp_path):
    local = tmp_path / "local.yaml"
    local.write_text("stack:\n  shadow:\n    binary: tools/shadow/bin/shadow\n")
    study = pipeline.study_from_snakemake({}, local)
    assert study.name == "default"
    assert study.stack.shadow_binary == "tools/shadow/bin/shadow"
    paper = pipeline.study_from_snakemake(yaml.safe_load((CONFIGS / "paper.yaml").read_text()), local)
    assert paper.nodes == 1000 and paper.stack.shadow_binary == "tools/shadow/bin/shadow"


def test_run_config_has_one_size(small_study):
    run = pipeline.run_config(small_study, 25000)
    assert run["traffic"]["message_sizes"] == [25000]
    assert cfg.resolve(run).run_ids() == ["n12-size25000B-seed7"]
