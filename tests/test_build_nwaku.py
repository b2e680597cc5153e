"""The nwaku build: scripts/build_nwaku.sh against a stand-in nwaku repository (a submodule, a
Makefile whose wakunode2 prints what it was built from), and the build_nwaku rule's command line
run by Snakemake against a stand-in script that records its arguments."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import DEFAULT_NWAKU_TAG, REPO

from waku_shadow import checkout
from waku_shadow.configuration import sources
from waku_shadow.stack import builds

SCRIPT = REPO / "scripts" / "build_nwaku.sh"
TAG = DEFAULT_NWAKU_TAG
# wakunode2 prints the relay source, the vendored library and the Nim flags it was built with; the build
# prints the Nim lib file a Nim patch changes, when it is given a lib folder
MAKEFILE = """wakunode2:
\tmkdir -p build
\t-@cat "$(patsubst --lib:%,%,$(filter --lib:%,$(NIMFLAGS)))/system/seqs_v2.nim" 2>/dev/null
\tprintf '#!/bin/sh\\necho "%s | %s | %s"\\n' "$$(cat relay.nim)" "$$(cat vendor/dep/dep.nim)" "$(NIMFLAGS)" > build/wakunode2
\tchmod +x build/wakunode2
"""
# file:// submodules, as a mirror behind a firewall serves them (docs/running.md)
GIT_FILE_PROTOCOL = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "protocol.file.allow", "GIT_CONFIG_VALUE_0": "always"}


def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True, env={**os.environ, **GIT_FILE_PROTOCOL})


@pytest.fixture
def upstream(tmp_path):
    """An nwaku-shaped repository tagged TAG with one submodule, vendor/dep."""
    dep = tmp_path / "dep"
    dep.mkdir()
    git("init", "-q", "-b", "main", cwd=dep)
    (dep / "dep.nim").write_text("dep 1.0\n")
    git("add", ".", cwd=dep)
    git("commit", "-q", "-m", "dep", cwd=dep)
    repo = tmp_path / "nwaku"
    repo.mkdir()
    git("init", "-q", "-b", "master", cwd=repo)
    (repo / "Makefile").write_text(MAKEFILE)
    (repo / "relay.nim").write_text("relay publishes at once\n")
    git("submodule", "add", "-q", f"file://{dep}", "vendor/dep", cwd=repo)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "release", cwd=repo)
    git("tag", TAG, cwd=repo)
    return repo


def patch_file(path):
    path.write_text(
        "A header, as the project's patches have.\n\n"
        "diff --git a/relay.nim b/relay.nim\n--- a/relay.nim\n+++ b/relay.nim\n@@ -1 +1 @@\n"
        "-relay publishes at once\n+relay sleeps L_g, then publishes\n"
    )
    return path


def build(*args, env=None):
    if shutil.which("make") is None:
        pytest.skip("scripts/build_nwaku.sh runs make, which this machine lacks (the container image has no compilers)")
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **GIT_FILE_PROTOCOL, "NWAKU_MEMORY_MANAGER": "orc", **(env or {})})


def test_without_a_source_the_tag_is_cloned_with_its_submodules_and_built_patched(upstream, tmp_path):
    out = tmp_path / "out"
    done = build(f"file://{upstream}", TAG, out, patch_file(tmp_path / "0001-delay.patch"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "relay sleeps L_g, then publishes | dep 1.0 | --mm:orc"
    assert (out / "src" / "vendor" / "dep" / "dep.nim").exists()
    assert (out / "src" / "relay.nim").read_text() == "relay publishes at once\n"  # patches reverted


def test_a_source_tree_is_built_patched_and_left_as_it_was(upstream, tmp_path):
    source = tmp_path / "checkout"
    git("clone", "-q", "--recurse-submodules", str(upstream), str(source), cwd=tmp_path)
    git("checkout", "-q", TAG, cwd=source)
    out = tmp_path / "out"
    done = build("--source", source, "unused-repository", TAG, out, patch_file(tmp_path / "0001-delay.patch"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("relay sleeps L_g, then publishes | dep 1.0")
    assert not (out / "src").exists()
    assert (source / "relay.nim").read_text() == "relay publishes at once\n"


def test_a_submodule_that_cannot_be_fetched_stops_the_clone_naming_it(upstream, tmp_path):
    shutil.rmtree(tmp_path / "dep")  # the submodule's repository is gone, as a mirror that lacks it
    done = build(f"file://{upstream}", TAG, tmp_path / "out")
    assert done.returncode != 0
    assert f"build_nwaku: the submodules of file://{upstream} at {TAG} could not all be fetched" in done.stderr


def test_a_patch_next_to_an_earlier_patchs_change_is_reverted_too(upstream, tmp_path):
    # like nwaku patches 0018 and 0019: the later one changes a line inside the earlier one's hunk
    source = loop_source(upstream, tmp_path)
    earlier = tmp_path / "0001-ends.patch"
    earlier.write_text(
        "Changes lines 2 and 6.\n\ndiff --git a/loop.nim b/loop.nim\n--- a/loop.nim\n+++ b/loop.nim\n"
        "@@ -1,7 +1,7 @@\n line 1\n-line 2\n+line two\n line 3\n line 4\n line 5\n-line 6\n+line six\n line 7\n"
    )
    later = loop_patch(tmp_path / "0002-middle.patch", "line 4", "line four", 4)
    done = build("--source", source, "unused-repository", TAG, tmp_path / "out", earlier, later)
    assert done.returncode == 0, done.stderr
    assert (source / "loop.nim").read_text() == "".join(f"line {n}\n" for n in range(1, 8))


def loop_source(upstream, tmp_path):
    """A checkout of upstream whose TAG holds loop.nim, seven numbered lines."""
    source = tmp_path / "checkout"
    git("clone", "-q", "--recurse-submodules", str(upstream), str(source), cwd=tmp_path)
    (source / "loop.nim").write_text("".join(f"line {n}\n" for n in range(1, 8)))
    git("add", "loop.nim", cwd=source)
    git("commit", "-q", "-m", "loop", cwd=source)
    git("tag", "-f", TAG, cwd=source)
    return source


def loop_patch(path, old, new, line):
    """A patch of loop.nim that turns `old` into `new` at `line`, with the numbered lines around it as context."""
    path.write_text(
        f"Changes line {line}.\n\ndiff --git a/loop.nim b/loop.nim\n--- a/loop.nim\n+++ b/loop.nim\n"
        f"@@ -{line - 1},3 +{line - 1},3 @@\n line {line - 1}\n-{old}\n+{new}\n line {line + 1}\n"
    )
    return path


def test_a_patch_of_a_line_an_earlier_patch_wrote_applies_after_it(upstream, tmp_path):
    # like nwaku patch 0020, which changes lines that 0006 and 0008 wrote
    source = loop_source(upstream, tmp_path)
    earlier = loop_patch(tmp_path / "0001-four.patch", "line 4", "line four", 4)
    later = loop_patch(tmp_path / "0002-capitals.patch", "line four", "line FOUR", 4)
    done = build("--source", source, "unused-repository", TAG, tmp_path / "out", earlier, later)
    assert done.returncode == 0, done.stderr
    assert (source / "loop.nim").read_text() == "".join(f"line {n}\n" for n in range(1, 8))


def test_a_patch_that_does_not_apply_is_named_and_the_ones_before_it_are_reverted(upstream, tmp_path):
    source = loop_source(upstream, tmp_path)
    earlier = loop_patch(tmp_path / "0001-four.patch", "line 4", "line four", 4)
    stale = loop_patch(tmp_path / "0002-stale.patch", "line 4", "line FOUR", 4)
    done = build("--source", source, "unused-repository", TAG, tmp_path / "out", earlier, stale)
    assert done.returncode != 0
    assert f"build_nwaku: 0002-stale.patch does not apply to {source} at {TAG} after the patches before it" in done.stderr
    assert (source / "loop.nim").read_text() == "".join(f"line {n}\n" for n in range(1, 8))


def test_a_missing_source_value_is_a_usage_error(tmp_path):
    done = build("--source", "", "https://github.com/waku-org/nwaku.git", TAG, tmp_path / "out")
    assert done.returncode == 2
    assert "usage:" in done.stderr


# The rule, as Snakemake runs it: the workflow copied beside a stand-in build_nwaku.sh that records
# the arguments it was given and leaves a wakunode2 where the real script would.
STAND_IN = """#!/bin/sh
for argument in "$@"; do printf '%s\\n' "$argument"; done > "$(dirname "$0")/arguments"
while [ $# -gt 0 ]; do case $1 in *.patch) break ;; esac; out=$1; shift; done
printf '#!/bin/sh\\necho "nwaku (stand-in)"\\n' > "$out/wakunode2"
chmod +x "$out/wakunode2"
"""


def run_build_rule(tmp_path, *config, nwaku=None):
    workflow = tmp_path / "workflow"
    workflow.mkdir()
    shutil.copy(REPO / "Snakefile", workflow)
    shutil.copytree(REPO / "rules", workflow / "rules")
    (workflow / "scripts").mkdir()
    (workflow / "scripts" / "build_nwaku.sh").write_text(STAND_IN)
    (workflow / "scripts" / "build_nwaku.sh").chmod(0o755)
    build_dir = tmp_path / "build"
    given = ["--config", f"resources={{build_dir: {build_dir}}}", *config]
    machine = {"resources": {"build_dir": str(build_dir)}}
    if nwaku:
        given.append(f"stack={json.dumps({'nwaku': nwaku})}")
        machine["stack"] = {"nwaku": nwaku}
    # the build folder is named after the tag, patches and flags, not after where the source comes from
    study = sources.study_from_snakemake(machine, local_path=tmp_path / "no-local.yaml")
    wakunode2 = builds.nwaku_build_dir(study) / "wakunode2"
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "-s", str(workflow / "Snakefile"), str(wakunode2), *given],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, sources.LOCAL_CONFIG_ENV: str(tmp_path / "no-local.yaml")},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    arguments = (workflow / "scripts" / "arguments").read_text().splitlines()
    identity = json.loads((wakunode2.parent / builds.IDENTITY).read_text())
    return arguments, identity, wakunode2.parent


def test_the_build_rule_clones_the_pinned_tag_without_a_source_tree(tmp_path):
    arguments, identity, out = run_build_rule(tmp_path)
    patches = [str(p.path) for p in checkout.build_patches(TAG, "orc")]
    assert patches[-1].endswith("nim/0001-setlen-zeroes-with-memset.patch")
    assert arguments == ["https://github.com/waku-org/nwaku.git", TAG, str(out), *patches]
    assert identity["built_from"] == f"https://github.com/waku-org/nwaku.git {TAG}"
    assert identity["patch_tiers"] == "all" and "-essential-" not in out.name


def test_the_build_rule_builds_a_configured_source_tree(tmp_path):
    source = tmp_path / "nwaku"
    arguments, identity, out = run_build_rule(tmp_path, f"stack={{nwaku: {{source: {source}}}}}")
    patches = [str(p.path) for p in checkout.build_patches(TAG, "orc")]
    assert arguments == ["--source", str(source), "https://github.com/waku-org/nwaku.git", TAG, str(out), *patches]
    assert identity["built_from"] == str(source)


def test_the_build_rule_applies_only_the_essential_tiers_when_told(tmp_path):
    arguments, identity, out = run_build_rule(tmp_path, nwaku={"patches": "essential"})
    essential = checkout.build_patches(TAG, "orc", "essential")
    assert arguments == ["https://github.com/waku-org/nwaku.git", TAG, str(out), *(str(p.path) for p in essential)]
    assert "-essential-patches-" in out.name
    assert identity["patch_tiers"] == "essential"
    assert [(p["file"], p["tier"]) for p in identity["patches"]] == [(p.path.name, p.tier) for p in essential]
    assert "speed" not in {p["tier"] for p in identity["patches"]}


def fake_nim(tmp_path):
    """A Nim installation: bin/nim and a lib folder with the setLen loop the Nim patch replaces."""
    nim = tmp_path / "nim"
    (nim / "bin").mkdir(parents=True)
    (nim / "lib" / "system").mkdir(parents=True)
    (nim / "bin" / "nim").write_text("#!/bin/sh\necho 'Nim Compiler Version 2.2.6'\n")
    (nim / "bin" / "nim").chmod(0o755)
    (nim / "lib" / "system.nim").write_text("# system\n")
    (nim / "lib" / "system" / "seqs_v2.nim").write_text("zero one element at a time\n")
    return nim


def nim_patch_file(folder):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "0001-memset.patch"
    path.write_text("A header.\n\ndiff --git a/system/seqs_v2.nim b/system/seqs_v2.nim\n--- a/system/seqs_v2.nim\n"
                    "+++ b/system/seqs_v2.nim\n@@ -1 +1 @@\n-zero one element at a time\n+zero with one memset\n")
    return path


def build_with_system_nim(nim, *args):
    return build(*args, env={"NWAKU_MAKE_FLAGS": "USE_SYSTEM_NIM=1", "NWAKU_PATH_PREPEND": str(nim / "bin")})


def test_a_nim_patch_builds_against_a_patched_copy_of_nims_lib(upstream, tmp_path):
    nim = fake_nim(tmp_path)
    out = tmp_path / "out"
    patch = nim_patch_file(tmp_path / "nim-patches" / "nim")
    done = build_with_system_nim(nim, f"file://{upstream}", TAG, out, patch_file(tmp_path / "0001-delay.patch"), patch)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"relay sleeps L_g, then publishes | dep 1.0 | --mm:orc --lib:{out}/nim-lib"
    assert "zero with one memset" in done.stdout.splitlines()  # the copy the build compiled against
    assert (nim / "lib" / "system" / "seqs_v2.nim").read_text() == "zero one element at a time\n"
    assert not (out / "nim-lib").exists()  # only the build needs it


def test_a_nim_patch_that_does_not_apply_stops_the_build(upstream, tmp_path):
    nim = fake_nim(tmp_path)
    (nim / "lib" / "system" / "seqs_v2.nim").write_text("another Nim's setLen\n")
    patch = nim_patch_file(tmp_path / "nim-patches" / "nim")
    done = build_with_system_nim(nim, f"file://{upstream}", TAG, tmp_path / "out", patch)
    assert done.returncode != 0
    assert f"build_nwaku: the Nim patches do not apply to {nim}/lib" in done.stderr


def test_a_nim_whose_lib_folder_is_a_link_is_left_unpatched(upstream, tmp_path):
    nim = fake_nim(tmp_path)
    (nim / "lib").rename(tmp_path / "shared-lib")
    (nim / "lib").symlink_to(tmp_path / "shared-lib")
    out = tmp_path / "out"
    patch = nim_patch_file(tmp_path / "nim-patches" / "nim")
    done = build_with_system_nim(nim, f"file://{upstream}", TAG, out, patch)
    assert done.returncode == 0, done.stderr
    assert "zero with one memset" in done.stdout.splitlines()
    assert (tmp_path / "shared-lib" / "system" / "seqs_v2.nim").read_text() == "zero one element at a time\n"


# After v0.38.1 nwaku's Nim dependencies are nimble packages: make build-deps installs them in
# nimbledeps/pkgs2/<name>-<version>-<checksum>/ and the Makefile takes Nim flags in NIM_PARAMS.
NIMBLE_MAKEFILE = """install-nim:
\tmkdir -p $(HOME)/.nim/nim-2.2.4/bin $(HOME)/.nim/nim-2.2.4/lib/system $(HOME)/.nimble/bin
\techo '# system' > $(HOME)/.nim/nim-2.2.4/lib/system.nim
\techo 'Nim 2.2.4 zeroes one element at a time' > $(HOME)/.nim/nim-2.2.4/lib/system/seqs_v2.nim
\tprintf '#!/bin/sh\\n' > $(HOME)/.nim/nim-2.2.4/bin/nim && chmod +x $(HOME)/.nim/nim-2.2.4/bin/nim
\tln -sf $(HOME)/.nim/nim-2.2.4/bin/nim $(HOME)/.nimble/bin/nim
build-deps:
\tmkdir -p nimbledeps/pkgs2/libp2p-2.0.0-0123abcd/libp2p nimbledeps/pkgs2/libp2p_mix-0.1.0-4567/libp2p
\ttest -e nimbledeps/pkgs2/libp2p-2.0.0-0123abcd/libp2p/gossipsub.nim || echo 'floods every copy' > nimbledeps/pkgs2/libp2p-2.0.0-0123abcd/libp2p/gossipsub.nim
NIM_PARAMS := $(NIM_PARAMS) -d:release
wakunode2: build-deps
\tmkdir -p build
\t-@cat "$(patsubst --lib:%,%,$(filter --lib:%,$(NIM_PARAMS)))/system/seqs_v2.nim" 2>/dev/null
\tprintf '#!/bin/sh\\necho "%s | %s | %s"\\n' "$$(cat relay.nim)" "$$(cat nimbledeps/pkgs2/libp2p-2.0.0-0123abcd/libp2p/gossipsub.nim)" "$(NIM_PARAMS)" > build/wakunode2
\tchmod +x build/wakunode2
"""


@pytest.fixture
def nimble_upstream(tmp_path):
    """An nwaku-shaped repository after the move to nimble.lock, at an untagged master commit."""
    repo = tmp_path / "logos-delivery"
    repo.mkdir()
    git("init", "-q", "-b", "master", cwd=repo)
    (repo / "Makefile").write_text(NIMBLE_MAKEFILE)
    (repo / "nimble.lock").write_text("{}\n")
    (repo / ".gitignore").write_text("nimbledeps/\nbuild/\n")
    (repo / "relay.nim").write_text("relay publishes at once\n")
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "master", cwd=repo)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    return repo, f"master-{commit[:9]}"


def vendor_patch_file(path):
    """A patch to nwaku and to its libp2p, written against vendor/nim-libp2p as for the older tags."""
    path.write_text(
        "A header.\n\n"
        "diff --git a/relay.nim b/relay.nim\n--- a/relay.nim\n+++ b/relay.nim\n@@ -1 +1 @@\n"
        "-relay publishes at once\n+relay sleeps L_g, then publishes\n"
        "diff --git a/vendor/nim-libp2p/libp2p/gossipsub.nim b/vendor/nim-libp2p/libp2p/gossipsub.nim\n"
        "--- a/vendor/nim-libp2p/libp2p/gossipsub.nim\n+++ b/vendor/nim-libp2p/libp2p/gossipsub.nim\n"
        "@@ -1 +1 @@\n-floods every copy\n+encodes a copy once\n"
    )
    return path


def test_a_master_commit_is_cloned_and_its_nimble_packages_patched(nimble_upstream, tmp_path):
    repo, tag = nimble_upstream
    out = tmp_path / "out"
    done = build(f"file://{repo}", tag, out, vendor_patch_file(tmp_path / "0006-encode-once.patch"),
                 env={"NWAKU_MAKE_FLAGS": "NIMFLAGS=-d:disableMarchNative"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "relay sleeps L_g, then publishes | encodes a copy once | -d:disableMarchNative --mm:orc -d:release"
    source = out / "src"
    assert (source / "relay.nim").read_text() == "relay publishes at once\n"
    assert (source / "nimbledeps/pkgs2/libp2p-2.0.0-0123abcd/libp2p/gossipsub.nim").read_text() == "floods every copy\n"


def test_a_source_at_another_commit_than_the_pinned_master_is_refused(nimble_upstream, tmp_path):
    repo, _ = nimble_upstream
    done = build("--source", repo, "unused-repository", "master-000000000", tmp_path / "out")
    assert done.returncode != 0
    assert f"build_nwaku: the nwaku source {repo} is at " in done.stderr
    assert "not at the pinned tag master-000000000" in done.stderr


def test_a_patch_for_a_package_nimble_did_not_install_names_it(nimble_upstream, tmp_path):
    repo, tag = nimble_upstream
    patch = tmp_path / "0007-chronos.patch"
    patch.write_text("diff --git a/vendor/nim-chronos/chronos/a.nim b/vendor/nim-chronos/chronos/a.nim\n"
                     "--- a/vendor/nim-chronos/chronos/a.nim\n+++ b/vendor/nim-chronos/chronos/a.nim\n@@ -1 +1 @@\n-a\n+b\n")
    done = build(f"file://{repo}", tag, tmp_path / "out", patch)
    assert done.returncode != 0
    assert "0007-chronos.patch patches vendor/nim-chronos, but" in done.stderr
    assert "has no single chronos package" in done.stderr


def test_a_nim_patch_on_master_patches_the_nim_its_makefile_installs(nimble_upstream, tmp_path):
    repo, tag = nimble_upstream
    home = tmp_path / "home"
    system_nim = fake_nim(tmp_path)  # on PATH, as USE_SYSTEM_NIM=1 would use for an older tag
    patch = tmp_path / "nim-patches" / "nim" / "0001-memset.patch"
    patch.parent.mkdir(parents=True)
    patch.write_text("diff --git a/system/seqs_v2.nim b/system/seqs_v2.nim\n--- a/system/seqs_v2.nim\n"
                     "+++ b/system/seqs_v2.nim\n@@ -1 +1 @@\n-Nim 2.2.4 zeroes one element at a time\n"
                     "+Nim 2.2.4 zeroes with one memset\n")
    done = build(f"file://{repo}", tag, tmp_path / "out", patch,
                 env={"HOME": str(home), "NWAKU_MAKE_FLAGS": "USE_SYSTEM_NIM=1", "NWAKU_PATH_PREPEND": str(system_nim / "bin")})
    assert done.returncode == 0, done.stderr
    assert "Nim 2.2.4 zeroes with one memset" in done.stdout.splitlines()
    assert (home / ".nim/nim-2.2.4/lib/system/seqs_v2.nim").read_text() == "Nim 2.2.4 zeroes one element at a time\n"


def test_the_build_rule_records_make_flags_that_start_with_a_dash(tmp_path):
    # make's -o (take a target as done) is how a tree set up offline skips master's install-nim
    flags = ["-oinstall-nim", "NIMBLE=nimble --legacy --useSystemNim"]
    arguments, identity, out = run_build_rule(tmp_path, nwaku={"make_flags": flags})
    assert identity["make_flags"] == flags
