"""Reading a rendered run's shadow.yaml."""

from __future__ import annotations

from pathlib import Path

import yaml

from waku_shadow import layout


def read(run_dir: Path) -> dict:
    """A rendered shadow.yaml (at N = 1000 a few MB: read with libyaml where PyYAML has it)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load((run_dir / layout.SHADOW_CONFIG).read_text(), Loader=loader)


def nwaku_program(config: dict) -> str:
    """The file name of the nwaku binary, every host's first process: Shadow names its output after it."""
    first_host = next(iter(config["hosts"].values()))
    return Path(first_host["processes"][0]["path"]).name
