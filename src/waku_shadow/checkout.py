"""The waku-shadow repository the library works from.

The library is the workflow's: besides its own package data (the study schema) it reads
files of the repository it was installed from: the paper's data, the nwaku and Shadow
patches, the shipped configs, the report notebook. An install that is not an editable
one from a checkout (``pip install -e .``) must say so instead of finding nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from waku_shadow.errors import StackError

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


def patches(tag: str) -> list[Path]:
    """nwaku-patches/<tag>/*.patch, the patches for one nwaku tag, in the order they are applied."""
    patch_dir = path(NWAKU_PATCHES)
    found = sorted((patch_dir / tag).glob("*.patch"))
    if not found:
        carried = nwaku_tags()
        raise StackError(
            f"stack.nwaku.tag: no patches for nwaku {tag} in {patch_dir}"
            + (f"; the project carries patches for {', '.join(carried)}" if carried else "")
        )
    return found


def nim_patches() -> list[Path]:
    """nwaku-patches/nim/*.patch: patches to Nim's standard library for the orc runtime."""
    return sorted((path(NWAKU_PATCHES) / NIM_PATCHES).glob("*.patch"))


def build_patches(tag: str, memory_manager: str) -> list[Path]:
    """Every patch an nwaku build applies: the tag's, then, with orc, Nim's (scripts/build_nwaku.sh
    applies those in nim/ to a copy of Nim's lib folder)."""
    return patches(tag) + (nim_patches() if memory_manager == "orc" else [])


def shadow_patches() -> list[Path]:
    """shadow/patches/*.patch, the patches the workflow applies to Shadow, in the order they are applied."""
    return sorted(path(SHADOW_PATCHES).glob("*.patch"))


PAPER_DATA = "data/paper"
COST_LAW = "bench/cost-law.json"  # the cost law the simulate rule declares its resources from (cost/cost_model.py)


def paper_table(name: str) -> pandas.DataFrame:
    """One of the paper's published tables in data/paper/ (its '#' lines name the source)."""
    import pandas as pd  # here, not at the top: the config and Shadow stages need no pandas

    return pd.read_csv(path(PAPER_DATA) / name, comment="#")
