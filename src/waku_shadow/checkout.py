"""The waku-shadow repository the library works from.

The library is the workflow's: besides its own package data (the study schema) it reads
files of the repository it was installed from: the paper's data, the nwaku and Shadow
patches, the shipped configs, the report notebook. An install that is not an editable
one from a checkout (``pip install -e .``) must say so instead of finding nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import StackError

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
