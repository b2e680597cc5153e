"""A stand-in for shadow that replays a recorded real run: run as ``shadow --progress true shadow.yaml``
in a run folder whose name is a recorded run's, it writes that run's nwaku logs where Shadow would
(shadow.data/hosts/<host>/<nwaku binary>.1000.stdout) and reports success.

The recorded runs are those under $REPLAY_RECORDED (e.g. tests/data/recorded); the run folder must
have been rendered from the recorded run's study config, so that its schedule's hashes match.
"""

import gzip
import os
import shutil
import sys
from pathlib import Path

import yaml

if sys.argv[1:] == ["--version"]:
    print("Shadow 3.3.0 (replaying recorded runs)")
    sys.exit(0)

run_dir = Path.cwd()
recorded = Path(os.environ["REPLAY_RECORDED"]) / run_dir.name
config = yaml.safe_load((run_dir / sys.argv[-1]).read_text())
program = Path(next(iter(config["hosts"].values()))["processes"][0]["path"]).name
hosts = run_dir / config["general"]["data_directory"] / "hosts"
for log in sorted((recorded / "logs").glob("*/wakunode2.log.gz")):
    host_dir = hosts / log.parent.name
    host_dir.mkdir(parents=True, exist_ok=True)
    with gzip.open(log, "rb") as src, (host_dir / f"{program}.1000.stdout").open("wb") as dst:
        shutil.copyfileobj(src, dst)
print("** Shadow completed successfully", file=sys.stderr)
