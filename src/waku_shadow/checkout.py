"""The waku-shadow repository the library works from.

The library is the workflow's: besides its own package data (the study schema) it reads
files of the repository it was installed from: the paper's data, the nwaku and Shadow
patches, the shipped configs, the report notebook. An install that is not an editable
one from a checkout (``pip install -e .``) must say so instead of finding nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from waku_shadow.errors import ConfigError, StackError

if TYPE_CHECKING:
    import pandas

REPOSITORY_ENV = "WAKU_SHADOW_REPOSITORY"
MARKER = "Snakefile"


def root() -> Path:
    """The repository: $WAKU_SHADOW_REPOSITORY, or the checkout this package was installed from."""
    configured = os.environ.get(REPOSITORY_ENV)
    candidate = Path(configured) if configured else Path(__file__).resolve().parents[2]
    if not (candidate / MARKER).is_file():
        where = f"${REPOSITORY_ENV} = {configured}" if configured else f"the package's location ({Path(__file__).parent})"
        raise StackError(
            f"waku-shadow's repository not found from {where}: the library reads the repository's "
            f"data, patches and configs; install it from a checkout (pip install -e .) or set {REPOSITORY_ENV}"
        )
    return candidate


def path(relative: str | Path) -> Path:
    """A file or folder of the repository, which must exist."""
    found = root() / relative
    if not found.exists():
        raise StackError(f"{found}: missing from the waku-shadow repository")
    return found


NWAKU_PATCHES = "nwaku-patches"
NIM_PATCHES = "nim"  # nwaku-patches/nim/: Nim's standard library, not an nwaku tag


SHADOW_PATCHES = "shadow/patches"


def nwaku_tags() -> list[str]:
    """The nwaku tags the project carries patches for (a folder of nwaku-patches/ each)."""
    return sorted(d.name for d in path(NWAKU_PATCHES).iterdir() if d.name != NIM_PATCHES and any(d.glob("*.patch")))


SERIES = "series"  # nwaku-patches/<tag>/series: the folder's patches in application order, each with its tier
# what a patch is for: gives a run its meaning, is an experiment's setting, or only makes runs faster or smaller
TIERS = ("meaning", "switch", "speed")
# stack.nwaku.patches: the tiers each choice builds with
PATCH_CHOICES = {"all": TIERS, "essential": ("meaning", "switch")}


@dataclass(frozen=True)
class Patch:
    """A patch file of nwaku-patches/ and the tier its folder's series gives it."""

    path: Path
    tier: str

    @property
    def number(self) -> str:
        """The patch's number, the start of its file name ("0025")."""
        return self.path.name.split("-", 1)[0]


def series(folder: Path) -> list[Patch]:
    """The patches of one folder of nwaku-patches/ as its series file lists them, in application
    order: one line per patch, its file name and its tier; ``#`` starts a comment."""
    listing = folder / SERIES
    if not listing.is_file():
        raise ConfigError(f"{listing}: missing; it lists the folder's patches in order, each with its tier ({', '.join(TIERS)})")
    listed: list[Patch] = []
    for number, line in enumerate(listing.read_text().splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        where = f"{listing}, line {number}"
        if len(fields) != 2:
            raise ConfigError(f"{where}: {line.strip()!r} is not a patch's file name and its tier")
        name, tier = fields
        if tier not in TIERS:
            raise ConfigError(f"{where}: {name}'s tier {tier!r} is none of {', '.join(TIERS)}")
        if not (folder / name).is_file():
            raise ConfigError(f"{where}: {name} is not a file of {folder}")
        if any(patch.path.name == name for patch in listed):
            raise ConfigError(f"{where}: {name} is listed twice")
        listed.append(Patch(folder / name, tier))
    unlisted = sorted(set(path.name for path in folder.glob("*.patch")) - {patch.path.name for patch in listed})
    if unlisted:
        raise ConfigError(f"{folder / unlisted[0]}: not in {listing}; give it its place and tier there")
    return listed


def listed_patch(file: Path) -> Patch:
    """The patch at ``file`` with the tier its folder's series gives it."""
    for patch in series(file.parent):
        if patch.path.name == file.name:
            return patch
    raise ConfigError(f"{file}: not in {file.parent / SERIES}")


def patches(tag: str) -> list[Patch]:
    """nwaku-patches/<tag>/: the patches for one nwaku tag, in the order they are applied."""
    patch_dir = path(NWAKU_PATCHES)
    if not any((patch_dir / tag).glob("*.patch")):
        carried = nwaku_tags()
        raise StackError(
            f"stack.nwaku.tag: no patches for nwaku {tag} in {patch_dir}"
            + (f"; the project carries patches for {', '.join(carried)}" if carried else "")
        )
    return series(patch_dir / tag)


def nim_patches() -> list[Patch]:
    """nwaku-patches/nim/: patches to Nim's standard library for the orc runtime."""
    return series(path(NWAKU_PATCHES) / NIM_PATCHES)


def chosen(listed: list[Patch], choice: str) -> list[Patch]:
    """Those of ``listed`` whose tier ``choice`` (stack.nwaku.patches: all, essential) builds with."""
    return [patch for patch in listed if patch.tier in PATCH_CHOICES[choice]]


def patch_numbers(tag: str, choice: str) -> set[str]:
    """The numbers of the tag's own patches (not Nim's) of the tiers ``choice`` builds with."""
    return {patch.number for patch in chosen(patches(tag), choice)}


def build_patches(tag: str, memory_manager: str, choice: str = "all") -> list[Patch]:
    """The patches an nwaku build applies, in order: the tag's, then, with orc, Nim's
    (scripts/build_nwaku.sh applies those in nim/ to a copy of Nim's lib folder), of the tiers
    ``choice`` builds with."""
    return chosen(patches(tag) + (nim_patches() if memory_manager == "orc" else []), choice)


def shadow_patches() -> list[Path]:
    """shadow/patches/*.patch, the patches the workflow applies to Shadow, in the order they are applied."""
    return sorted(path(SHADOW_PATCHES).glob("*.patch"))


PAPER_DATA = "data/paper"
COST_LAW = "bench/cost-law.json"  # the cost law the simulate rule declares its resources from (cost/cost_model.py)


def paper_table(name: str) -> pandas.DataFrame:
    """One of the paper's published tables in data/paper/ (its '#' lines name the source)."""
    import pandas as pd  # here, not at the top: the config and Shadow stages need no pandas

    return pd.read_csv(path(PAPER_DATA) / name, comment="#")
