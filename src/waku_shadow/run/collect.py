"""The files Shadow wrote for each host, gzipped into the run's logs/."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from waku_shadow import layout
from waku_shadow.errors import LogError
from waku_shadow.run import shadow_yaml

NWAKU_LOG = "wakunode2.log.gz"


def collect(run_dir: Path) -> Path:
    """Gzip every file Shadow wrote for each host into logs/<host>/ and drop the raw copies.

    nwaku's stdout (``<binary name>.<pid>.stdout``, e.g. ``wakunode2.1000.stdout``) becomes
    ``logs/<host>/wakunode2.log.gz``, the stdouts of a node that left and came back (churn) one
    after the other in the order they started; other files keep their names with ``.gz`` appended.
    """
    hosts_dir = run_dir / layout.SHADOW_DATA / "hosts"
    out = run_dir / layout.LOGS
    if not hosts_dir.is_dir():
        if out.is_dir():
            return out
        raise LogError(f"{hosts_dir}: Shadow wrote no host directories; did the run start?")
    program = shadow_yaml.nwaku_program(shadow_yaml.read(run_dir))
    for host_dir in sorted(hosts_dir.iterdir()):
        target = out / host_dir.name
        target.mkdir(parents=True, exist_ok=True)
        files = [file for file in sorted(host_dir.iterdir()) if file.is_file()]
        nwaku_stdouts = sorted((f for f in files if _is_stdout_of(program, f.name)), key=_pid)
        if nwaku_stdouts:
            _concatenate(nwaku_stdouts, target / NWAKU_LOG)
        for file in files:
            if file not in nwaku_stdouts:
                with file.open("rb") as src, gzip.open(target / (file.name + ".gz"), "wb", compresslevel=6) as dst:
                    shutil.copyfileobj(src, dst)
    shutil.rmtree(hosts_dir)
    return out


def _concatenate(nwaku_stdouts: list[Path], target: Path) -> None:
    """One node's nwaku stdouts, in the order its processes started, as one gzipped log."""
    with gzip.open(target, "wb", compresslevel=6) as dst:
        for file in nwaku_stdouts:
            with file.open("rb") as src:
                shutil.copyfileobj(src, dst)
            if file is not nwaku_stdouts[-1] and not _ends_with_newline(file):
                raise LogError(f"{file}: the nwaku process that left ends its log mid-line")


def _pid(stdout: Path) -> int:
    """The process id in Shadow's ``<program>.<pid>.stdout``: later processes of a host have larger ones."""
    return int(stdout.name.split(".")[-2])


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        if handle.seek(0, 2) == 0:
            return True
        handle.seek(-1, 2)
        return handle.read(1) == b"\n"


def _is_stdout_of(program: str, name: str) -> bool:
    return name.startswith(program + ".") and name.endswith(".stdout")
