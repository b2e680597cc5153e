"""What the Snakemake rules need from the library: the study, its runs and their paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import checkout, stack
from . import config as cfg
from . import schema
from .study import merge
from .study import MACHINE_SECTIONS, Study
from .errors import ConfigError

DEFAULT_STUDY = "configs/default.yaml"
LOCAL_CONFIG_ENV = "WAKU_SHADOW_LOCAL_CONFIG"
# The machine sections as the Snakefile resolved them (local.yaml and --config), for its jobs.
# They travel in the environment, which Snakemake does not track, and not in a rule's params,
# which it does: a machine setting changes how a run is executed, never which runs are due.
MACHINE_ENV = "WAKU_SHADOW_MACHINE"
# The studies behind the paper's figures and tables (`snakemake paper`), by their configs/ names.
PAPER_STUDIES = ("paper", "paper-calibrated", "multihost")
PAPER_FIGURES = "paper-figures"


def local_config_path() -> Path:
    """local.yaml at the repository root, or the file $WAKU_SHADOW_LOCAL_CONFIG names."""
    return Path(os.environ.get(LOCAL_CONFIG_ENV) or checkout.root() / "local.yaml")


def read_local(path: Path | None = None) -> dict:
    """The untracked machine config: only the stack and resources sections belong there."""
    path = path or local_config_path()
    if not path.exists():
        return {}
    local = cfg.read_yaml(path)
    stray = sorted(set(local) - set(MACHINE_SECTIONS))
    if stray:
        raise ConfigError(
            f"{path}: only {', '.join(MACHINE_SECTIONS)} belong in the local config; "
            f"move '{stray[0]}' into the study config"
        )
    try:
        schema.check_machine_sections(local)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return local


def study_from_snakemake(snakemake_config: dict, local_path: Path | None = None) -> Study:
    """The study Snakemake was given (--configfile / --config), or configs/default.yaml without one."""
    given = dict(snakemake_config)
    source = "the Snakemake config"
    if "study" not in given:
        given = merge(cfg.read_yaml(checkout.path(DEFAULT_STUDY)), given)
        source = DEFAULT_STUDY
    return cfg.resolve(merge(read_local(local_path), given), source=source)


def shipped_study_config(name: str, snakemake_config: dict) -> dict:
    """configs/<name>.yaml with the machine sections the workflow was given (--config, overlays)."""
    machine = {section: snakemake_config[section] for section in MACHINE_SECTIONS if section in snakemake_config}
    return merge(cfg.read_yaml(checkout.path(f"configs/{name}.yaml")), machine)


def study_dir(study: Study) -> Path:
    return Path(study.resources.results_dir) / study.name


def run_config_json(study: Study, run_id: str) -> str:
    return json.dumps(study.run_config(run_id), sort_keys=True)


def export_machine(study: Study) -> None:
    """Hand the study's machine sections to the workflow's jobs (see MACHINE_ENV)."""
    os.environ[MACHINE_ENV] = json.dumps({section: study.resolved[section] for section in MACHINE_SECTIONS})


def machine_config() -> dict:
    """The machine sections for a job: the workflow's, or local.yaml's outside a workflow."""
    exported = os.environ.get(MACHINE_ENV)
    return json.loads(exported) if exported else read_local()


def study_on_this_machine(study_config: dict, source: str) -> Study:
    """A study config (a run's, a study's: no machine sections) with this machine's sections."""
    return cfg.resolve(merge(study_config, machine_config()), source=source)


def shadow_build_dir(study: Study) -> Path:
    """Where the build rule installs Shadow: named after the tag and the patches."""
    name = stack.shadow_build_name(study.stack.shadow_tag, stack.shadow_patches())
    return Path(study.resources.build_dir) / "shadow" / name


def nwaku_build_dir(study: Study) -> Path:
    """Where the build rule puts wakunode2: named after the tag, memory manager, patches and make flags."""
    nwaku = study.stack
    name = stack.nwaku_build_name(
        nwaku.nwaku_tag, nwaku.nwaku_memory_manager, nwaku.nwaku_allocator, stack.patches(nwaku.nwaku_tag),
        nwaku.nwaku_make_flags,
    )
    return Path(study.resources.build_dir) / "nwaku" / name
