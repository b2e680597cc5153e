"""What the Snakemake rules need from the library: the study, its runs and their paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from . import checkout, stack
from . import config as cfg
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


def read_local(path: Path | None = None) -> cfg.Layer:
    """The untracked machine config: only the stack and resources sections belong there."""
    path = path or local_config_path()
    if not path.exists():
        return cfg.Layer(str(path), {})
    local = cfg.read_yaml(path)
    stray = sorted(set(local) - set(MACHINE_SECTIONS))
    if stray:
        raise ConfigError(
            f"{path}: only {', '.join(MACHINE_SECTIONS)} belong in the local config; "
            f"move '{stray[0]}' into the study config"
        )
    return cfg.Layer(str(path), local)


class ShippedStudy(dict):
    """A shipped study's config for a Snakemake module (``snakemake paper``), with the layers it
    was made of, so that its errors name the file or --config that set a wrong key."""

    def __init__(self, layers: list[cfg.Layer]):
        merged: dict = {}
        for layer in layers:
            merged = merge(merged, layer.values)
        super().__init__(merged)
        self.layers = layers


def command_line_layers(config_settings) -> list[cfg.Layer]:
    """What Snakemake's --configfile and --config gave (its ConfigSettings), in order.

    --config is read again from its text as YAML: Snakemake types only a top-level value and
    leaves a nested one as text (``network={nodes: 20}`` would give the string '20')."""
    layers = [cfg.Layer(str(path), cfg.read_yaml(path)) for path in config_settings.configfiles]
    if config_settings.config_args:
        given: dict = {}
        for argument in config_settings.config_args:
            key, _, text = argument.partition("=")
            given = merge(given, {key: _yaml_value(text)})
        layers.append(cfg.Layer("--config", given))
    elif config_settings.config:
        layers.append(cfg.Layer("--config", dict(config_settings.config)))
    return layers


def _yaml_value(text: str):
    try:
        return yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return text


def study_from_snakemake(snakemake_config: dict, config_settings=None, local_path: Path | None = None) -> Study:
    """The study Snakemake was given (--configfile / --config, or a ShippedStudy module config),
    over configs/default.yaml when none names a study, and local.yaml's machine sections."""
    if isinstance(snakemake_config, ShippedStudy):
        given = snakemake_config.layers
    elif config_settings is not None:
        given = command_line_layers(config_settings)
    else:
        given = [cfg.Layer("the Snakemake config", dict(snakemake_config))] if snakemake_config else []
    layers = [read_local(local_path), *given]
    if not any("study" in layer.values for layer in given):
        layers.insert(0, cfg.Layer(DEFAULT_STUDY, cfg.read_yaml(checkout.path(DEFAULT_STUDY))))
    return cfg.resolve_layers(layers)


def shipped_study_config(name: str, config_settings) -> ShippedStudy:
    """configs/<name>.yaml with the machine sections the workflow was given (--config, overlays)."""
    path = f"configs/{name}.yaml"
    machine = [
        cfg.Layer(layer.source, {section: layer.values[section] for section in MACHINE_SECTIONS if section in layer.values})
        for layer in command_line_layers(config_settings)
    ]
    return ShippedStudy([cfg.Layer(path, cfg.read_yaml(checkout.path(path))), *(layer for layer in machine if layer.values)])


def study_dir(study: Study) -> Path:
    return Path(study.resources.results_dir) / study.name


def run_config_json(study: Study, run_id: str) -> str:
    return json.dumps(study.run_config(run_id), sort_keys=True)


def export_machine(study: Study) -> None:
    """Hand the study's machine sections to the workflow's jobs (see MACHINE_ENV)."""
    os.environ[MACHINE_ENV] = json.dumps({section: study.resolved[section] for section in MACHINE_SECTIONS})


def machine_config() -> cfg.Layer:
    """The machine sections for a job: the workflow's, or local.yaml's outside a workflow."""
    exported = os.environ.get(MACHINE_ENV)
    return cfg.Layer("the workflow's stack and resources", json.loads(exported)) if exported else read_local()


def study_on_this_machine(study_config: dict, source: str) -> Study:
    """A study config (a run's, a study's: no machine sections) with this machine's sections."""
    return cfg.resolve_layers([cfg.Layer(source, study_config), machine_config()])


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
