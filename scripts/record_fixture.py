#!/usr/bin/env python3
"""Record a real-run fixture the tests replay: tests/data/<study>/<run>/.

    python scripts/record_fixture.py [recorded | recorded-cascade | ...] [study=NAME SETTING...]

Runs tests/data/<study>.yaml through the workflow on the stack configured in
local.yaml, then keeps, per run, what the parser and validator read (nwaku's
logs, packet captures and store queries, gzipped, and the run's tables) minus anything naming this machine.
Settings after the study are Snakemake --config overrides, e.g. a switch the same
small study records with and without; with study=NAME the fixture is tests/data/NAME/.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "data"
KEEP = ["identities.csv", "links.csv", "schedule.csv", "churn.csv", "run_stats.json", "shadow.stderr"]
MACHINE_KEYS = ("stack", "resources")


def main(study: str = "recorded", *settings: str) -> int:
    config = FIXTURES / f"{study}.yaml"
    named = [setting.split("=", 1)[1] for setting in settings if setting.startswith("study=")]
    study = named[-1] if named else study
    out = FIXTURES / study
    results = REPO / "build" / "fixture-results"
    shutil.rmtree(results, ignore_errors=True)
    subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", str(config),
         "--config", f"resources={{results_dir: {results}}}", *settings],
        cwd=REPO,
        check=True,
    )
    shutil.rmtree(out, ignore_errors=True)
    for run_dir in sorted((results / study / "runs").iterdir()):
        target = out / run_dir.name
        target.mkdir(parents=True)
        for name in KEEP:
            shutil.copy(run_dir / name, target / name)
        config = yaml.safe_load((run_dir / "config.yaml").read_text())
        for key in MACHINE_KEYS:
            config.pop(key, None)
        (target / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        provenance = json.loads((run_dir / "provenance.json").read_text())
        provenance["nwaku"].pop("built_from", None)
        (target / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n")
        store_queries = [out for out in sorted((run_dir / "logs").glob("*/curl.*.stdout.gz"))
                         if b"store_query_ns" in gzip.decompress(out.read_bytes())]
        for log in (sorted((run_dir / "logs").glob("*/wakunode2.log.gz")) + sorted((run_dir / "logs").glob("*/eth0.pcap.gz"))
                    + store_queries):
            (target / "logs" / log.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copy(log, target / "logs" / log.parent.name / log.name)
        print(f"recorded {target.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
