"""A run whose nodes Shadow cannot hold open files for is refused before Shadow starts, with the way out."""

import pytest
from conftest import REPO

from waku_shadow import cli
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import merge
from waku_shadow.errors import RunError
from waku_shadow.run import open_files


def study(nodes: int, few: bool):
    config = merge(loader.read_yaml(REPO / "configs/default.yaml"),
                   {"network": {"nodes": nodes}, "shadow": {"few_descriptors_per_process": few}})
    return loader.resolve(config)


def test_nodes_within_the_limit_run():
    open_files.check(study(3_000, False), limit=20_000)  # 3,000 x 6 + 32
    open_files.check(study(10_000, True), limit=20_000)  # 10,000 x 1 + 32


def test_too_many_nodes_name_the_switch_that_fits_them():
    with pytest.raises(RunError, match=r"4,000 nodes need about 24,032 open files in Shadow \(6 per node and 32 of its own\), "
                                       r"more than this machine's hard limit of 20,000 \(ulimit -Hn\): "
                                       r"set shadow.few_descriptors_per_process: true"):
        open_files.check(study(4_000, False), limit=20_000)


def test_too_many_nodes_even_with_the_switch_say_how_many_fit():
    with pytest.raises(RunError, match="at most 19,968 nodes fit here"):
        open_files.check(study(25_000, True), limit=20_000)


def test_the_shadow_config_carries_the_switch_only_when_set(tmp_path):
    from waku_shadow.render import plan, run_folder

    on = run_folder.shadow_yaml(plan.plan(study(20, True), 2000), tmp_path, "/bin/true", "/bin/true")
    off = run_folder.shadow_yaml(plan.plan(study(20, False), 2000), tmp_path, "/bin/true", "/bin/true")
    assert on["experimental"]["few_descriptors_per_process"] is True
    assert "few_descriptors_per_process" not in off.get("experimental", {})  # a Shadow without 0003 runs it


def test_check_config_refuses_on_this_machine(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(open_files, "hard_limit", lambda: 1_000)
    config = tmp_path / "big.yaml"
    config.write_text("study: big\nnetwork: {nodes: 400}\n")
    assert cli.main(["check-config", str(config)]) == 1
    assert "400 nodes need about 2,432 open files" in capsys.readouterr().err
