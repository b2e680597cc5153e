"""A run's provenance.json: which study point, config, builds and host rendered the run."""

from __future__ import annotations

import datetime as dt
import json
import platform
from importlib import metadata
from pathlib import Path

from waku_shadow import layout
from waku_shadow.configuration.study import point_columns
from waku_shadow.render import nwaku
from waku_shadow.render.plan import RunPlan
from waku_shadow.stack import builds

PYTHON_PACKAGES = ("pandas", "numpy", "snakemake")


def provenance(run: RunPlan, shadow: str, curl: str, nwaku_identity: dict, rendered_at: dt.datetime | None = None) -> dict:
    """The provenance of a run rendered from ``run`` (the plan of a study of one run), with the
    ``shadow`` and ``curl`` commands it runs and the identity.json of its wakunode2 build."""
    study = run.study
    rendered_at = rendered_at or dt.datetime.now(dt.timezone.utc)
    return {
        "study": study.name,
        **point_columns(study),
        "nodes": study.nodes,
        "message_size_bytes": run.size_bytes,
        "topology_attempt": run.topology.attempt,
        "config_sha256_12": study.config_hash(),
        "rendered_at_utc": rendered_at.isoformat(timespec="seconds"),
        "waku_shadow": builds.project_version(),
        "shadow": builds.command_version([shadow, "--version"]),
        "nwaku": nwaku_identity,
        # what the patches read: the settings every node ran with (unset ones keep nwaku's own behaviour)
        "nwaku_environment": nwaku.environment(study),
        "curl": builds.command_version([curl, "--version"]),
        "host": {"machine": platform.machine(), "python": platform.python_version()},
        "python_packages": {p: metadata.version(p) for p in PYTHON_PACKAGES if _installed(p)},
    }


def write(run_dir: Path, run: RunPlan, shadow: str, curl: str, nwaku_identity: dict) -> None:
    """Write the run's provenance.json into its folder."""
    (run_dir / layout.PROVENANCE).write_text(json.dumps(provenance(run, shadow, curl, nwaku_identity), indent=2) + "\n")


def _installed(package: str) -> bool:
    try:
        metadata.version(package)
    except metadata.PackageNotFoundError:
        return False
    return True
