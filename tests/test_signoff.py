"""The release verdict's rule (analyse/signoff.py), on hand-worked numbers and on the recorded real sweep
(tests/data/recorded-sweep/: D = 2 and 5, seeds 21 and 22, 10 nodes, packet captures)."""

import json
import math

import pandas as pd
import pytest
import yaml
from conftest import RECORDED
from recorded import parsed_copies

from waku_shadow import cli, layout
from waku_shadow.analyse import signoff, study_tables
from waku_shadow.render import nwaku
from waku_shadow.report import signoff_page

RECORDED_RUNS = sorted((RECORDED / "recorded-sweep").iterdir())


@pytest.fixture(scope="module")
def by_degree(tmp_path_factory):
    """The recorded sweep's runs table split by D: two builds' worth of runs on the same seeds."""
    copies = parsed_copies(RECORDED_RUNS, tmp_path_factory.mktemp("signoff"))
    for run in copies:
        assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    table = study_tables.runs_table(copies, ["d", "size_bytes"])
    return {d: runs.drop(columns="d") for d, runs in table.groupby("d")}


def test_a_run_set_against_itself_is_the_same_on_every_metric(by_degree):
    verdicts = signoff.compare(by_degree[5], by_degree[5], ["size_bytes"])
    assert set(verdicts["metric"]) >= {"latency_p50_ms", "net_bytes_per_message", "duplicates_per_receiver", "wall_s"}
    assert (verdicts["seeds"] == 2).all() and (verdicts["difference"] == 0).all()
    assert (verdicts["verdict"] == signoff.SAME).all()


def test_a_larger_mesh_is_called_higher_only_where_two_seeds_settle_it(by_degree):
    """D = 5 against D = 2: more copies and bytes per message on both seeds. Two seeds give Student's t
    one degree of freedom (97.5 %: 12.706): the copies per relay differ alike on both seeds and are
    called higher; the bytes differ by 147 and 121 KB, an interval from below zero, so undecided."""
    verdicts = signoff.compare(by_degree[2], by_degree[5], ["size_bytes"]).set_index("metric")
    for metric, expected in (("relay_copies", signoff.HIGHER), ("net_bytes_per_message", signoff.UNDECIDED)):
        row = verdicts.loc[metric]
        differences = (by_degree[5].set_index("seed")[metric] - by_degree[2].set_index("seed")[metric])
        assert (differences > 0).all()
        half = 12.706 * differences.std(ddof=1) / math.sqrt(2)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((differences.mean() - half, differences.mean() + half), rel=1e-3)
        assert row["verdict"] == expected


def test_the_rule_on_hand_worked_differences():
    base = pd.DataFrame({"size_bytes": 2000, "seed": [1, 2, 3], "latency_p50_ms": [500.0, 510.0, 490.0]})
    # differences 1, 1, 1 ms: the interval is [1, 1], inside ± 1 % of 500 ms = 5 ms
    assert signoff.compare(base, base.assign(latency_p50_ms=base["latency_p50_ms"] + 1), ["size_bytes"])["verdict"].item() == signoff.SAME
    # differences 10, 12, 8 ms: mean 10, sd 2, half width 4.303 x 2 / sqrt 3 = 4.97: [5.03, 14.97], above 5 ms
    later = base.assign(latency_p50_ms=base["latency_p50_ms"] + [10, 12, 8])
    row = signoff.compare(base, later, ["size_bytes"]).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((10 - 4.9686, 10 + 4.9686), abs=1e-3)
    assert row["verdict"] == signoff.HIGHER and row["margin"] == pytest.approx(5.0)
    assert signoff.compare(later, base, ["size_bytes"])["verdict"].item() == signoff.LOWER
    # differences -6, 0, 6: the interval holds zero and reaches past the margin: the seeds do not settle it
    mixed = base.assign(latency_p50_ms=base["latency_p50_ms"] + [-6, 0, 6])
    assert signoff.compare(base, mixed, ["size_bytes"])["verdict"].item() == signoff.UNDECIDED
    # one seed: no interval, so only an identical value is the same
    one = base.head(1)
    assert signoff.compare(one, one, ["size_bytes"])["verdict"].item() == signoff.SAME
    assert signoff.compare(one, one.assign(latency_p50_ms=501.0), ["size_bytes"])["verdict"].item() == signoff.UNDECIDED


def test_runs_with_no_seed_in_common_are_refused():
    base = pd.DataFrame({"size_bytes": [2000], "seed": [1], "latency_p50_ms": [500.0]})
    with pytest.raises(ValueError, match="share no run"):
        signoff.compare(base, base.assign(seed=2), ["size_bytes"])


def study_folder(results, name: str, runs: list) -> str:
    """results/<name>/ holding parsed and validated copies of the recorded sweep's runs, as the workflow leaves them."""
    folder = results / name
    copies = parsed_copies(runs, folder / layout.RUNS)
    for run in copies:
        assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    (folder / layout.STUDY_CONFIG).write_text((RECORDED / "recorded-sweep.yaml").read_text().replace(
        "study: recorded-sweep", f"study: {name}"))
    return str(folder)


def test_the_signoff_page_of_a_build_against_itself(tmp_path):
    base = study_folder(tmp_path, "recorded-sweep-base", RECORDED_RUNS)
    again = study_folder(tmp_path, "recorded-sweep-again", RECORDED_RUNS)
    out = tmp_path / "signoff"
    assert cli.main(["signoff", "--base", base, "--candidate", again, "--base-label", "base",
                     "--candidate-label", "again", "--out", str(out)]) == 0
    verdicts = pd.read_csv(out / signoff_page.VERDICTS)
    assert (verdicts["verdict"] == signoff.SAME).all() and set(verdicts["study"]) == {"recorded-sweep"}
    agreement = pd.read_csv(out / signoff_page.RECEIPTS)
    assert sorted(agreement["run"]) == [run.name for run in RECORDED_RUNS] and (agreement["identical_share"] == 1).all()
    page = (out / "signoff.md").read_text()
    assert page.startswith("# Sign-off: again against base\n")
    simulated = ~verdicts["metric"].isin(signoff.COST_METRICS)
    assert f"**Verdicts:** {simulated.sum()} same, 0 higher, 0 lower, 0 undecided" in page and "## What the runs cost" in page
    assert "| base | v0.36.0 |" in page and "<table>" in (out / "signoff.html").read_text()


def test_a_battery_must_pair_its_studies(tmp_path, capsys):
    base = study_folder(tmp_path, "recorded-sweep-base", RECORDED_RUNS)
    assert cli.main(["signoff", "--base", base, base, "--candidate", base, "--base-label", "a", "--candidate-label", "b",
                     "--out", str(tmp_path / "out")]) == 1
    assert "--base names 2 studies and --candidate 1: the battery pairs them one by one" in capsys.readouterr().err


@pytest.mark.parametrize("tag, reads_relay_without_rest", [("v0.37.1-beta", True), ("v0.38.1", False)])
def test_a_run_is_rendered_for_the_build_it_runs_on_not_this_machines_tag(tmp_path, small_study, tag,
                                                                           reads_relay_without_rest):
    """A sign-off side's run config names no stack (the machine's sections are left out), so what its
    build's patches read comes from the build's identity: v0.37.1-beta's relays subscribe only through
    patch 0004's setting, without which none of them gets a message."""
    identity = tmp_path / "identity.json"
    identity.write_text(json.dumps({"nwaku_tag": tag, "patch_tiers": "all"}))
    run_dir = tmp_path / "run"
    config = {**small_study.resolved, "traffic": {**small_study.resolved["traffic"], "message_sizes": ["2 KB"]}}
    config.pop("stack", None)
    config.pop("resources", None)
    assert cli.main(["render", "--run-dir", str(run_dir), "--config-json", json.dumps(config), "--wakunode2", "true",
                     "--nwaku-identity", str(identity), "--shadow", "true"]) == 0
    hosts = yaml.safe_load((run_dir / layout.SHADOW_CONFIG).read_text())["hosts"]
    environment = hosts["node0000"]["processes"][0]["environment"]
    assert (nwaku.ENV_RELAY_WITHOUT_REST in environment) == reads_relay_without_rest
