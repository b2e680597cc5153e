"""scripts/build_shadow.sh against a stand-in repository whose ./setup only records what it built."""

import subprocess

import pytest
from conftest import REPO

SCRIPT = REPO / "scripts" / "build_shadow.sh"
# ./setup build ... --prefix P installs a bin/shadow that prints the source's tcp.c;
# ./setup install does nothing more
SETUP = """#!/bin/sh
set -e
[ "$1" = build ] || exit 0
while [ $# -gt 0 ]; do [ "$1" = --prefix ] && prefix=$2; shift; done
mkdir -p "$prefix/bin"
printf '#!/bin/sh\\ncat %s/tcp.c\\n' "$PWD" > "$prefix/bin/shadow"
chmod +x "$prefix/bin/shadow"
"""


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def upstream(tmp_path):
    repo = tmp_path / "upstream"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    (repo / "setup").write_text(SETUP)
    (repo / "setup").chmod(0o755)
    (repo / "tcp.c").write_text("cwnd stays open\n")
    git("add", ".", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "release", cwd=repo)
    git("tag", "v3.3.0", cwd=repo)
    return repo


def patch_file(path, old, new):
    path.write_text(
        "A header, as the project's patches have.\n\n"
        "diff --git a/tcp.c b/tcp.c\n--- a/tcp.c\n+++ b/tcp.c\n@@ -1 +1 @@\n"
        f"-{old}\n+{new}\n"
    )
    return path


def build(upstream, prefix, *patches):
    return subprocess.run(
        ["bash", str(SCRIPT), f"file://{upstream}", "v3.3.0", str(prefix), *map(str, patches)],
        capture_output=True, text=True, timeout=120,
    )


def test_the_patches_are_applied_before_the_build(upstream, tmp_path):
    patch = patch_file(tmp_path / "0001-restart.patch", "cwnd stays open", "cwnd restarts after idle")
    done = build(upstream, tmp_path / "shadow", patch)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "cwnd restarts after idle"  # the installed shadow's --version


def test_a_patch_that_does_not_apply_stops_the_build(upstream, tmp_path):
    patch = patch_file(tmp_path / "0001-other.patch", "a line tcp.c does not have", "anything")
    done = build(upstream, tmp_path / "shadow", patch)
    assert done.returncode != 0
    assert "build_shadow: 0001-other.patch does not apply to Shadow v3.3.0 after the patches before it" in done.stderr
    assert not (tmp_path / "shadow" / "bin" / "shadow").exists()


def test_a_patch_applies_over_the_one_before_it(upstream, tmp_path):
    """Patches apply one by one, in order: a later one may change what an earlier one wrote."""
    first = patch_file(tmp_path / "0001-restart.patch", "cwnd stays open", "cwnd restarts after idle")
    second = patch_file(tmp_path / "0002-again.patch", "cwnd restarts after idle", "cwnd restarts twice")
    done = build(upstream, tmp_path / "shadow", first, second)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "cwnd restarts twice"
