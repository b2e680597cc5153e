#!/usr/bin/env python3
"""Prove the container image: build it, run the default study and the tests inside it, and compare
its receipts with the same study run natively; write what it cost to bench/container.json, which
docs/running.md quotes (`waku-shadow docs-tables`).

    python scripts/prove_container.py --native results/default [--engine podman] [--engine-option OPT ...]
        [--engine-arg ARG ...] [--build-log LOG | -- BUILD-ARGS...]

The native study (the default study, run with `snakemake --cores 2` on the image's release) must be
there first. Without --build-log the image is built with `ENGINE build -t waku-shadow BUILD-ARGS .`
and timed; with it, the build is the one whose output (with bash's `time`) that log holds (a build
that failed and was resumed from the engine's cache: each attempt's log, their times summed).
What a sandboxed host needs (docs/running.md) goes in --engine-option (before the engine's command,
e.g. --runtime=runc) and --engine-arg (after it, for build and run alike, e.g.
--ulimit=nofile=20000:20000).
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from waku_shadow.cost import container  # noqa: E402

IMAGE = "waku-shadow"


def timed(command: list[str], check: bool = True, **kwargs) -> tuple[float, subprocess.CompletedProcess]:
    start = time.monotonic()
    done = subprocess.run(command, check=check, **kwargs)
    return time.monotonic() - start, done


def logged_build_seconds(log: Path) -> float:
    """bash's `time` line (real 20m12.345s) at the end of a build log."""
    found = re.findall(r"^real\s+(\d+)m([\d.]+)s", log.read_text(), re.MULTILINE)
    if not found:
        raise SystemExit(f"{log}: no 'real' line of bash's time")
    minutes, seconds = found[-1]
    return int(minutes) * 60 + float(seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--native", type=Path, required=True, help="the default study run natively (results/default)")
    parser.add_argument("--engine", default="podman")
    parser.add_argument("--engine-option", action="append", default=[], help="before the engine's command: --runtime=runc")
    parser.add_argument("--engine-arg", action="append", default=[], help="after it: --ulimit=nofile=20000:20000")
    parser.add_argument("--build-log", type=Path, action="append", default=[],
                        help="the log of a build already made, with bash's time; again for each resumption of it")
    parser.add_argument("--build-shared", action="store_true", help="that build shared the cores with other work")
    parser.add_argument("build_args", nargs="*", help="after --: the build's arguments (build contexts, build args)")
    args = parser.parse_args()
    engine = [args.engine, *args.engine_option]

    def command(name: str, *rest: str) -> list[str]:
        return [*engine, name, *args.engine_arg, *rest]

    if args.build_log:
        build_seconds = sum(logged_build_seconds(log) for log in args.build_log)
    else:
        build_seconds, _ = timed(command("build", "-t", IMAGE, *args.build_args, "."), cwd=REPO)
    image_bytes = int(subprocess.run([*engine, "image", "inspect", "--format", "{{.Size}}", IMAGE],
                                     check=True, capture_output=True, text=True).stdout.strip())
    version = subprocess.run([args.engine, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    tag = subprocess.run(command("run", "--rm", "--entrypoint", "sh", IMAGE, "-c", "grep -m1 'tag:' local.yaml"),
                         check=True, capture_output=True, text=True).stdout.split()[-1]

    with tempfile.TemporaryDirectory(prefix="container-results-") as results:
        study_seconds, _ = timed(command("run", "--rm", "--shm-size=8g", "-v", f"{results}:/waku-shadow/results",
                                         IMAGE, "--cores", "all"))
        receipts = container.receipts_against_native(args.native, Path(results) / args.native.name)
    # a failing test is a count of the record, not the end of it
    tests_seconds, tests = timed(command("run", "--rm", "--entrypoint", "python", IMAGE, "-m", "pytest", "-q"),
                                 check=False, capture_output=True, text=True)
    summary = tests.stdout.strip().splitlines()[-1]

    record = {"date": dt.date.today().isoformat(), "engine": version, "nwaku_tag": tag,
              "build_seconds": round(build_seconds), "build_alone": not args.build_shared, "image_bytes": image_bytes,
              "study_seconds": round(study_seconds), **receipts,
              "tests": {"counts": container.pytest_counts(summary), "seconds": round(tests_seconds)}}
    print(container.write(record, REPO / "bench"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
