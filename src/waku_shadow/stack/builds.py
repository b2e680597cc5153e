"""The simulated stack's identity: which Shadow and which patched nwaku a run used."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from waku_shadow import checkout
from waku_shadow.configuration.study import Study
from waku_shadow.errors import StackError

IDENTITY = "identity.json"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def patch_set_hash(paths: list[Path]) -> str:
    """One hash over the patch files' names and contents, in application order."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def make_flags_hash(make_flags: list[str] | tuple[str, ...]) -> str:
    return hashlib.sha256("\0".join(make_flags).encode()).hexdigest()[:8]


def nwaku_build_name(
    tag: str,
    memory_manager: str,
    allocator: str,
    paths: list[Path],
    make_flags: list[str] | tuple[str, ...] = (),
    patch_choice: str = "all",
) -> str:
    """Build folder name: changes exactly when the tag, the memory settings, a patch or a make flag
    changes; a build of fewer than all the patches' tiers (stack.nwaku.patches) also says which."""
    tiers = "" if patch_choice == "all" else f"{patch_choice}-"
    name = f"{tag}-{memory_manager}-{allocator}-{tiers}patches-{patch_set_hash(paths)}"
    return f"{name}-make-{make_flags_hash(make_flags)}" if make_flags else name


def shadow_build_name(tag: str, paths: list[Path]) -> str:
    """Build folder name: changes exactly when the tag or a patch changes."""
    return f"{tag}-patches-{patch_set_hash(paths)}"


def nwaku_identity(
    tag: str,
    patches: list[checkout.Patch] | None,
    binary: Path,
    built_from: str,
    make_flags: list[str] | None = None,
    memory_manager: str | None = None,
    allocator: str | None = None,
    patch_choice: str | None = None,
) -> dict:
    """What a run records of its wakunode2; ``patches`` and ``patch_choice`` (stack.nwaku.patches)
    are None for a prebuilt binary of unknown patches."""
    return {
        "nwaku_tag": tag,
        "patch_tiers": patch_choice,
        "patches": None if patches is None else [
            {"file": p.path.name, "tier": p.tier, "sha256": file_sha256(p.path)} for p in patches
        ],
        "patch_set": "unknown (prebuilt binary)" if patches is None else patch_set_hash([p.path for p in patches]),
        "memory_manager": memory_manager,
        "allocator": allocator,
        "make_flags": make_flags,
        "built_from": built_from,
        "binary_sha256": file_sha256(binary),
        "version": command_version([str(binary), "--version"]),
    }


def command_version(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise StackError(f"{command[0]}: not found") from None
    except (PermissionError, OSError) as exc:
        raise StackError(f"{command[0]}: cannot run it ({exc})") from None
    text = (done.stdout or done.stderr).strip()
    if done.returncode != 0:
        raise StackError(f"{' '.join(command)} failed with exit code {done.returncode}: {text[:300]}")
    return text.splitlines()[0] if text else ""


def project_version() -> str:
    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"],
            cwd=checkout.root(),
            capture_output=True,
            text=True,
            timeout=30,
        )
    except FileNotFoundError:
        return "unknown (no git)"
    return done.stdout.strip() or "unknown (not a git checkout)"


def shadow_build_dir(study: Study) -> Path:
    """Where the build rule installs Shadow: named after the tag and the patches."""
    name = shadow_build_name(study.stack.shadow_tag, checkout.shadow_patches())
    return Path(study.resources.build_dir) / "shadow" / name


def nwaku_build_dir(study: Study) -> Path:
    """Where the build rule puts wakunode2: named after the tag, memory manager, patches (and their
    tiers, when not all) and make flags."""
    nwaku = study.stack
    patches = checkout.build_patches(nwaku.nwaku_tag, nwaku.nwaku_memory_manager, nwaku.nwaku_patches)
    name = nwaku_build_name(
        nwaku.nwaku_tag, nwaku.nwaku_memory_manager, nwaku.nwaku_allocator,
        [patch.path for patch in patches], nwaku.nwaku_make_flags, nwaku.nwaku_patches,
    )
    return Path(study.resources.build_dir) / "nwaku" / name
