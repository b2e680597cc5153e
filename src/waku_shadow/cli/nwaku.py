"""The commands of the wakunode2 builds: record a build's identity, install one built elsewhere."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from waku_shadow import checkout
from waku_shadow.configuration import sources
from waku_shadow.errors import StackError
from waku_shadow.stack import builds


def cmd_identify_nwaku(args) -> None:
    binary = Path(args.binary)
    if not binary.is_file():
        raise StackError(f"wakunode2 not found: {binary}")
    patches = None if args.prebuilt else [checkout.listed_patch(Path(p)) for p in args.patches]
    identity = builds.nwaku_identity(
        args.tag, patches, binary, args.built_from, args.make_flag, args.memory_manager, args.allocator,
        None if args.prebuilt else args.patch_tiers,
    )
    Path(args.out).write_text(json.dumps(identity, indent=2) + "\n")


def cmd_adopt_nwaku(args) -> None:
    """Install a wakunode2 built with nwaku-patches/ where the build rule would have put it."""
    study = sources.study_from_snakemake({})
    target = builds.nwaku_build_dir(study)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(args.binary, target / "wakunode2")
    nwaku = study.stack
    identity = builds.nwaku_identity(
        nwaku.nwaku_tag,
        checkout.build_patches(nwaku.nwaku_tag, nwaku.nwaku_memory_manager, nwaku.nwaku_patches),
        target / "wakunode2",
        args.built_from,
        list(nwaku.nwaku_make_flags),
        nwaku.nwaku_memory_manager,
        nwaku.nwaku_allocator,
        nwaku.nwaku_patches,
    )
    (target / builds.IDENTITY).write_text(json.dumps(identity, indent=2) + "\n")
    print(target / "wakunode2")
