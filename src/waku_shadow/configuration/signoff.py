"""The sign-off's two builds, as `--config 'signoff={base: …, candidate: …}'` gives them, and the
battery study (configs/signoff.yaml) each runs: the same networks and seeds, on its own nwaku build.

A side is a tag (``v0.38.1``) or a mapping of stack.nwaku settings (``{tag: v0.38.1, patches:
essential}``, ``{tag: master-69fbffa3a, source: /path/to/tree}``); what it does not name is
SIDE_DEFAULTS, not local.yaml's (which may name another tag's tree). Its label, the settings' values
joined, names its study (<battery>-<label>: signoff-v0.38.1) and the page
(results/<battery>/<candidate>-vs-<base>/).
``battery: CONFIG`` runs another battery than configs/signoff.yaml (configs/signoff-small.yaml, the
small one a pull request's CI can afford).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from waku_shadow import checkout
from waku_shadow.configuration import loader, sources
from waku_shadow.configuration.study import MACHINE_SECTIONS
from waku_shadow.errors import ConfigError

BATTERY = "configs/signoff.yaml"
SIDES = ("base", "candidate")
BATTERY_KEY = "battery"
STUDY_PREFIX = "signoff-"
# what a side's build is when it does not say: its tag's upstream source with every patch, whatever
# local.yaml names for the Snakefile's own study
SIDE_DEFAULTS = {"patches": "all", "source": None, "binary": None}


@dataclass(frozen=True)
class Side:
    role: str  # base or candidate
    nwaku: dict  # stack.nwaku settings
    battery: str = BATTERY  # the study config both sides run

    @property
    def build(self) -> dict:
        return {**SIDE_DEFAULTS, **self.nwaku}

    @property
    def label(self) -> str:
        return re.sub(r"[^\w.-]+", "-", "-".join(str(value) for value in self.nwaku.values())).strip("-")

    @property
    def battery_name(self) -> str:
        """The battery config's study name (signoff, signoff-small): the page's folder under results/."""
        return loader.read_yaml(checkout.path(self.battery))["study"]

    @property
    def study(self) -> str:
        return f"{self.battery_name}-{self.label}"


def sides(config_settings) -> tuple[Side, Side] | None:
    """The base and the candidate --config names under `signoff`; None without a sign-off."""
    given = sources.command_line_signoff(config_settings)
    if given is None:
        return None
    if not isinstance(given, dict) or sorted(set(given) - {BATTERY_KEY}) != sorted(SIDES):
        raise ConfigError(f"--config signoff: give exactly {' and '.join(SIDES)} (and a battery, if not "
                          f"{BATTERY}), e.g. 'signoff={{base: v0.38.1, candidate: master-69fbffa3a}}'")
    battery = given.get(BATTERY_KEY, BATTERY)
    if not isinstance(battery, str) or not (checkout.root() / battery).is_file():
        raise ConfigError(f"--config signoff.{BATTERY_KEY}: {battery!r} is no config file of the repository")
    found = []
    for role in SIDES:
        value = given[role]
        nwaku = {"tag": value} if isinstance(value, str) else value
        if not isinstance(nwaku, dict) or "tag" not in nwaku:
            raise ConfigError(f"--config signoff.{role}: a tag, or a mapping of stack.nwaku settings with its tag; got {value!r}")
        found.append(Side(role, nwaku, battery))
    base, candidate = found
    if base.build == candidate.build:
        raise ConfigError(f"--config signoff: the base and the candidate are the same build ({base.label})")
    return base, candidate


def study_config(side: Side, config_settings) -> sources.ShippedStudy:
    """The battery study on one side's build: the battery's config, the machine sections the workflow
    was given, and the side's stack.nwaku, as study <battery>-<label>."""
    machine = [loader.Layer(layer.source, {s: layer.values[s] for s in MACHINE_SECTIONS if s in layer.values})
               for layer in sources.command_line_layers(config_settings)]
    side_layer = loader.Layer(f"--config signoff.{side.role}",
                              {"study": side.study, "stack": {"nwaku": side.build}})
    return sources.ShippedStudy([loader.Layer(side.battery, loader.read_yaml(checkout.path(side.battery))),
                                 *(layer for layer in machine if layer.values), side_layer])
