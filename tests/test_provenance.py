"""A run's provenance.json, as the render stage writes it."""

import datetime as dt
import json
import platform
from importlib import metadata

from waku_shadow.configuration import loader
from waku_shadow.render import nwaku, plan, provenance
from waku_shadow.stack import builds


def stand_in(tmp_path, name, line):
    """A command whose --version prints ``line``."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\necho '{line}'\necho 'second line'\n")
    path.chmod(0o755)
    return str(path)


def test_provenance_names_the_point_the_builds_and_the_host(small_study, tmp_path, monkeypatch):
    monkeypatch.setattr(builds, "project_version", lambda: "v0.1.0-3-gabc1234")
    study = loader.resolve(small_study.run_config("n12-size25000B-seed7"))
    run = plan.plan(study, 25000)
    identity = {"nwaku_tag": "v0.36.0", "binary_sha256": "ab" * 32}
    shadow = stand_in(tmp_path, "shadow", "Shadow 3.2.0 — patched")
    curl = stand_in(tmp_path, "curl", "curl 8.5.0 (x86_64-pc-linux-gnu)")
    at = dt.datetime(2025, 3, 4, 5, 6, 7, 890, tzinfo=dt.timezone.utc)

    written = provenance.provenance(run, shadow=shadow, curl=curl, nwaku_identity=identity, rendered_at=at)

    expected = {
        "study": "unit",
        "run": "n12-size25000B-seed7",
        "seed": 7,
        "nodes": 12,
        "message_size_bytes": 25000,
        "topology_attempt": 0,
        "config_sha256_12": study.config_hash(),
        "rendered_at_utc": "2025-03-04T05:06:07+00:00",
        "waku_shadow": "v0.1.0-3-gabc1234",
        "shadow": "Shadow 3.2.0 — patched",
        "nwaku": {"nwaku_tag": "v0.36.0", "binary_sha256": "ab" * 32},
        "nwaku_environment": nwaku.environment(study),
        "curl": "curl 8.5.0 (x86_64-pc-linux-gnu)",
        "host": {"machine": platform.machine(), "python": platform.python_version()},
        "python_packages": {p: metadata.version(p) for p in ("pandas", "numpy", "snakemake")},
    }
    assert list(written) == list(expected)  # the file's order of entries too
    assert written == expected
    assert written["nwaku_environment"]["WAKU_SIM_PROOF_GENERATION_DELAY_NS"] == "150000000"


def test_a_swept_runs_provenance_names_its_value(tmp_path):
    swept = loader.resolve(
        {
            "study": "unit",
            "seed": 7,
            "sweep": {"parameter": "network.peers_per_node", "values": [3, 4]},
            "network": {"nodes": 12, "latency": "50 ms"},
            "traffic": {"publishers": 3, "messages_per_publisher": 2, "message_sizes": ["2 KB"]},
        }
    )
    (run_id,) = [r for r in swept.run_ids() if r.startswith("peers_per_node4-") and "size2000B" in r]
    study = loader.resolve(swept.run_config(run_id))
    command = stand_in(tmp_path, "tool", "tool 1.0")

    written = provenance.provenance(plan.plan(study, 2000), shadow=command, curl=command, nwaku_identity={})

    assert {k: written[k] for k in ("run", "seed", "peers_per_node", "nodes", "message_size_bytes")} == {
        "run": run_id, "seed": 7, "peers_per_node": 4, "nodes": 12, "message_size_bytes": 2000}
    assert list(written)[:5] == ["study", "run", "seed", "peers_per_node", "nodes"]


def test_write_puts_it_in_the_run_folder(small_study, tmp_path, monkeypatch):
    monkeypatch.setattr(builds, "project_version", lambda: "v0")
    study = loader.resolve(small_study.run_config("n12-size2000B-seed7"))
    command = stand_in(tmp_path, "tool", "tool 1.0")

    provenance.write(tmp_path, plan.plan(study, 2000), shadow=command, curl=command, nwaku_identity={"nwaku_tag": "t"})

    text = (tmp_path / "provenance.json").read_text()
    assert text.endswith("}\n") and text.startswith('{\n  "study": "unit",\n  "run": "n12-size2000B-seed7",')
    assert json.loads(text)["nwaku"] == {"nwaku_tag": "t"}
