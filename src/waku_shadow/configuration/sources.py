"""What the Snakemake rules need from the library: the study, its runs and their paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from waku_shadow import checkout
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import MACHINE_SECTIONS, Study, merge
from waku_shadow.errors import ConfigError

DEFAULT_STUDY = "configs/default.yaml"
LOCAL_CONFIG_ENV = "WAKU_SHADOW_LOCAL_CONFIG"
# The machine sections as the Snakefile resolved them (local.yaml and --config), for its jobs.
# They travel in the environment, which Snakemake does not track, and not in a rule's params,
# which it does: a machine setting changes how a run is executed, never which runs are due.
MACHINE_ENV = "WAKU_SHADOW_MACHINE"
SIGNOFF_KEY = "signoff"  # --config signoff={base: …, candidate: …}: the sign-off's builds, no study setting


def local_config_path() -> Path:
    """local.yaml at the repository root, or the file $WAKU_SHADOW_LOCAL_CONFIG names."""
    return Path(os.environ.get(LOCAL_CONFIG_ENV) or checkout.root() / "local.yaml")


def read_local(path: Path | None = None) -> loader.Layer:
    """The untracked machine config: only the stack and resources sections belong there."""
    path = path or local_config_path()
    if not path.exists():
        return loader.Layer(str(path), {})
    local = loader.read_yaml(path)
    stray = sorted(set(local) - set(MACHINE_SECTIONS))
    if stray:
        raise ConfigError(
            f"{path}: only {', '.join(MACHINE_SECTIONS)} belong in the local config; "
            f"move '{stray[0]}' into the study config"
        )
    return loader.Layer(str(path), local)


class ShippedStudy(dict):
    """A shipped study's config for a Snakemake module (``snakemake paper``), with the layers it
    was made of, so that its errors name the file or --config that set a wrong key."""

    def __init__(self, layers: list[loader.Layer]):
        merged: dict = {}
        for layer in layers:
            merged = merge(merged, layer.values)
        super().__init__(merged)
        self.layers = layers


def command_line_layers(config_settings) -> list[loader.Layer]:
    """What Snakemake's --configfile and --config gave (its ConfigSettings), in order.

    --config is read again from its text as YAML: Snakemake types only a top-level value and
    leaves a nested one as text (``network={nodes: 20}`` would give the string '20')."""
    layers = [loader.Layer(str(path), loader.read_yaml(path)) for path in config_settings.configfiles]
    given = {key: value for key, value in _command_line_config(config_settings).items() if key != SIGNOFF_KEY}
    if given:
        layers.append(loader.Layer("--config", given))
    return layers


def command_line_signoff(config_settings):
    """What --config gave under `signoff` (configuration/signoff.py reads it), None when nothing: no
    study's key, so the study layers leave it out."""
    return _command_line_config(config_settings).get(SIGNOFF_KEY)


def _command_line_config(config_settings) -> dict:
    if config_settings.config_args:
        given: dict = {}
        for argument in config_settings.config_args:
            key, _, text = argument.partition("=")
            given = merge(given, {key: _yaml_value(text)})
        return given
    return dict(config_settings.config or {})


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
        given = [loader.Layer("the Snakemake config", dict(snakemake_config))] if snakemake_config else []
    layers = [read_local(local_path), *given]
    if not any("study" in layer.values for layer in given):
        layers.insert(0, loader.Layer(DEFAULT_STUDY, loader.read_yaml(checkout.path(DEFAULT_STUDY))))
    return loader.resolve_layers(layers)


def shipped_study_config(name: str, config_settings) -> ShippedStudy:
    """configs/<name>.yaml with the machine sections the workflow was given (--config, overlays)."""
    path = f"configs/{name}.yaml"
    machine = [
        loader.Layer(layer.source, {section: layer.values[section] for section in MACHINE_SECTIONS if section in layer.values})
        for layer in command_line_layers(config_settings)
    ]
    return ShippedStudy([loader.Layer(path, loader.read_yaml(checkout.path(path))), *(layer for layer in machine if layer.values)])


def shipped_studies(names, config_settings) -> tuple[dict[str, tuple[ShippedStudy, Study]], dict[str, str]]:
    """configs/<name>.yaml for each name, with the workflow's machine sections: those that resolve, with
    their study, and why each of the others is refused (a setting the given stack's build does not
    read), so that a target needing them can say so while every other target runs."""
    resolved, refused = {}, {}
    for name in names:
        shipped = shipped_study_config(name, config_settings)
        try:
            resolved[name] = shipped, study_from_snakemake(shipped)
        except ConfigError as exc:
            refused[name] = str(exc)
    return resolved, refused


def study_dir(study: Study) -> Path:
    return Path(study.resources.results_dir) / study.name


def run_config_json(study: Study, run_id: str) -> str:
    return json.dumps(study.run_config(run_id), sort_keys=True)


def export_machine(study: Study) -> None:
    """Hand the study's machine sections to the workflow's jobs (see MACHINE_ENV)."""
    os.environ[MACHINE_ENV] = json.dumps({section: study.resolved[section] for section in MACHINE_SECTIONS})


def machine_config() -> loader.Layer:
    """The machine sections for a job: the workflow's, or local.yaml's outside a workflow."""
    exported = os.environ.get(MACHINE_ENV)
    return loader.Layer("the workflow's stack and resources", json.loads(exported)) if exported else read_local()


def study_on_this_machine(study_config: dict, source: str) -> Study:
    """A study config (a run's, a study's: no machine sections) with this machine's sections."""
    return loader.resolve_layers([loader.Layer(source, study_config), machine_config()])
