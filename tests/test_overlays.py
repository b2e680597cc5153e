"""Overlays: configs/overlays/ holds files that change a few keys of any study, configs/ the studies;
a study takes overlays by name (its ``overlays`` key), laid under its own keys, and may extend one
study of configs/ (its ``extends`` key), setting only what differs."""

import re

import pytest
import yaml
from conftest import CONFIGS, OVERLAYS

from waku_shadow.configuration import loader
from waku_shadow.configuration.study import merge
from waku_shadow.errors import ConfigError

# configs/paper-calibrated.yaml as it was before the paper's era became an overlay, comments left out
# paper-calibrated as one file, before the era moved to the overlay (and with the era's subscription order, patch 0038)
PAPER_CALIBRATED_BEFORE_THE_OVERLAY = yaml.safe_load("""
study: paper-calibrated
seed: 1
repetitions: 3
network: {nodes: 1000, peers_per_node: 25, latency: 150 ms, bandwidth_up: 100 Mbit, bandwidth_down: 100 Mbit,
          packet_loss: 0.0}
by_size:
  2 KB: {network: {latency: 75 ms}}
gossipsub: {d: 6, d_low: null, d_high: null, d_lazy: null, subscribe_before_dials: true}
libp2p: {stream_muxer: mplex, sequential_dials: true}
traffic: {publishers: 1, messages_per_publisher: 9, message_sizes: [2 KB, 25 KB, 100 KB, 500 KB], interval: 5 s,
          warmup_messages: 1}
rln: {platform: null, proof_generation: 276 ms, verification: 4.5 ms, verification_per_byte: 0 ns}
shadow: {bootstrap: 60 s, drain: 10 s, stop_time: null, nwaku_log_level: NOTICE}
report: {compare_with: paper}
""")


@pytest.mark.parametrize("path", sorted(p for p in CONFIGS.glob("*.yaml") if p.name != "local.example.yaml"), ids=lambda p: p.stem)
def test_every_config_in_configs_is_a_whole_study(path):
    assert "study" in loader.read_yaml(path)
    assert loader.load(path).run_ids()


@pytest.mark.parametrize("path", sorted(OVERLAYS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_overlay_lays_over_a_study_and_sets_only_its_keys(path):
    paper = loader.load(CONFIGS / "paper.yaml")
    assert loader.load(CONFIGS / "paper.yaml", path).resolved == merge(paper.resolved, loader.read_yaml(path))


def test_paper_calibrated_with_the_era_overlay_is_the_study_it_was():
    before = loader.resolve(PAPER_CALIBRATED_BEFORE_THE_OVERLAY, source="paper-calibrated before")
    now = loader.load(CONFIGS / "paper-calibrated.yaml")
    assert now == before
    assert now.study_config() == before.study_config()
    own = loader.read_yaml(CONFIGS / "paper-calibrated.yaml")
    assert "libp2p" not in own and "subscribe_before_dials" not in own["gossipsub"]  # the era is the overlay's


def test_research_issue_takes_the_papers_era():
    study = loader.load(CONFIGS / "research-issue.yaml")
    assert (study.name, study.stream_muxer, study.sequential_dials) == ("research-issue", "mplex", True)
    assert study.bootstrap_ns == 80 * 10**9  # its own: 50 dials one by one outlast the overlay's minute
    assert "overlays" not in study.resolved


def test_overlays_lie_under_the_files_own_keys_and_over_earlier_layers():
    study = loader.resolve_layers([
        loader.Layer("earlier.yaml", {"study": "x", "libp2p": {"sequential_dials": False}, "shadow": {"bootstrap": "5 s"}}),
        loader.Layer("mine.yaml", {"overlays": ["paper-era"], "libp2p": {"stream_muxer": "yamux"}}),
    ])
    assert (study.stream_muxer, study.sequential_dials, study.bootstrap_ns) == ("yamux", True, 60 * 10**9)
    later = loader.resolve_layers([
        loader.Layer("mine.yaml", {"study": "x", "overlays": ["paper-era"]}),
        loader.Layer("--config", {"libp2p": {"sequential_dials": False}}),
    ])
    assert (later.stream_muxer, later.sequential_dials) == ("mplex", False)


def test_overlays_apply_in_the_order_named(tmp_path, monkeypatch):
    (tmp_path / "slow.yaml").write_text("shadow: {drain: 30 s}\n")
    (tmp_path / "quick.yaml").write_text("shadow: {drain: 3 s}\n")
    monkeypatch.setattr(loader, "OVERLAYS_DIR", str(tmp_path))
    assert loader.resolve({"study": "x", "overlays": ["slow", "quick"]}).drain_ns == 3 * 10**9
    assert loader.resolve({"study": "x", "overlays": ["quick", "slow"]}).drain_ns == 30 * 10**9


def test_an_unknown_overlay_is_named_with_those_there_are():
    shipped = ", ".join(sorted(path.stem for path in OVERLAYS.glob("*.yaml")))
    with pytest.raises(ConfigError) as refused:
        loader.resolve({"study": "x", "overlays": ["paper-ear"]}, source="mine.yaml")
    assert str(refused.value) == f"mine.yaml: overlays: no overlay 'paper-ear' in configs/overlays/ (there are: {shipped})"


@pytest.mark.parametrize("named, message", [
    ("paper-era", "mine.yaml: overlays: 'paper-era' is not of type 'array'"),
    (["paper-era", "paper-era"], "mine.yaml: overlays: ['paper-era', 'paper-era'] has non-unique elements"),
    (["configs/overlays/paper-era.yaml"], "mine.yaml: overlays.0: 'configs/overlays/paper-era.yaml' does not match"),
])
def test_overlays_is_a_list_of_names(named, message):
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}"):
        loader.resolve({"study": "x", "overlays": named}, source="mine.yaml")


def test_a_problem_an_overlay_sets_is_named_with_the_overlay(tmp_path, monkeypatch):
    (tmp_path / "tiny.yaml").write_text("network: {nodes: 1}\n")
    (tmp_path / "nested.yaml").write_text("overlays: [tiny]\n")
    monkeypatch.setattr(loader, "OVERLAYS_DIR", str(tmp_path))
    with pytest.raises(ConfigError) as refused:
        loader.resolve({"study": "x", "overlays": ["tiny"]}, source="mine.yaml")
    assert str(refused.value) == f"{tmp_path}/tiny.yaml: network.nodes: 1 is less than the minimum of 2"
    with pytest.raises(ConfigError, match=rf"^{tmp_path}/nested.yaml: an overlay is laid under a study and names no overlays"):
        loader.resolve({"study": "x", "overlays": ["nested"]})


def test_a_config_that_extends_a_study_is_that_study_with_its_changes(tmp_path):
    changes = {"study": "x", "seed": 3, "gossipsub": {"d_high": 12}, "libp2p": {"sequential_dials": False}}
    (tmp_path / "x.yaml").write_text(yaml.safe_dump({"extends": "paper-calibrated", **changes}))
    study = loader.load(tmp_path / "x.yaml")
    base = CONFIGS / "paper-calibrated.yaml"
    assert study == loader.resolve_layers([loader.Layer(str(base), loader.read_yaml(base)), loader.Layer("changes", changes)])
    assert (study.name, study.seed, study.gossipsub.d_high, study.repetitions) == ("x", 3, 12, 3)
    assert (study.stream_muxer, study.sequential_dials, study.bootstrap_ns) == ("mplex", False, 60 * 10**9)  # the base's overlay, under x
    assert "extends" not in study.resolved


def test_the_extending_configs_overlays_lie_over_the_study_it_extends():
    study = loader.resolve({"study": "x", "extends": "multihost", "overlays": ["no-slow-start-after-idle"]})
    assert loader.load(CONFIGS / "multihost.yaml").tcp_slow_start_after_idle and not study.tcp_slow_start_after_idle


def test_an_unknown_study_to_extend_is_named_with_those_there_are():
    studies = ", ".join(sorted(p.stem for p in CONFIGS.glob("*.yaml") if "study" in loader.read_yaml(p)))
    with pytest.raises(ConfigError) as refused:
        loader.resolve({"study": "x", "extends": "paper-calibrate"}, source="mine.yaml")
    assert str(refused.value) == f"mine.yaml: extends: no study config 'paper-calibrate' in configs/ (there are: {studies})"
    assert "local.example" not in studies  # machine sections, not a study
    with pytest.raises(ConfigError, match="^mine.yaml: extends: 'configs/paper.yaml' does not match"):
        loader.resolve({"study": "x", "extends": "configs/paper.yaml"}, source="mine.yaml")


def test_a_config_that_extends_another_names_its_own_study():
    with pytest.raises(ConfigError, match="^mine.yaml: a config that extends another names its own study; add 'study:'"):
        loader.resolve({"extends": "paper", "seed": 2}, source="mine.yaml")


def test_a_config_extends_one_that_extends_none(tmp_path, monkeypatch):
    (tmp_path / "base.yaml").write_text("study: base\nnetwork: {nodes: 1}\n")
    (tmp_path / "middle.yaml").write_text("study: middle\nextends: base\n")
    monkeypatch.setattr(loader, "STUDIES_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match=rf"^mine.yaml: extends: {tmp_path}/middle.yaml extends 'base' itself"):
        loader.resolve({"study": "x", "extends": "middle"}, source="mine.yaml")
    with pytest.raises(ConfigError) as refused:  # a problem the extended config sets is named with it
        loader.resolve({"study": "x", "extends": "base"}, source="mine.yaml")
    assert str(refused.value) == f"{tmp_path}/base.yaml: network.nodes: 1 is less than the minimum of 2"
