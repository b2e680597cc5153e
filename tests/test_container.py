"""The Dockerfile: its build contexts and copies everywhere; its image running the real stack when one
was built on this machine (an engine, podman or docker, with an image named waku-shadow)."""

import os
import re
import shlex
import shutil
import subprocess

from pathlib import Path

import pytest
from conftest import DEFAULT_NWAKU_TAG, REPO

from waku_shadow import checkout

DOCKERFILE = (REPO / "Dockerfile").read_text()
IMAGE = "waku-shadow"
# what this host's engine needs besides, e.g. "--runtime runc" in a sandbox (docs/running.md)
EXTRA_ARGS_ENV = "WAKU_SHADOW_CONTAINER_ARGS"


def test_every_build_context_is_an_empty_stage_and_documented():
    contexts = re.findall(r"^FROM scratch AS (\S+)$", DOCKERFILE, re.M)
    assert {"nwaku-source", "nim", "rust", "git-mirrors", "ca-certificates"} <= set(contexts)
    running = (REPO / "docs/running.md").read_text()
    for context in contexts:
        assert f"--build-context {context}=" in DOCKERFILE and f"`{context}=" in running, context
        assert f"COPY --from={context} / " in DOCKERFILE, context


def test_what_the_dockerfile_copies_from_the_project_exists():
    for sources in re.findall(r"^COPY (?!--from)(.+) \S+$", DOCKERFILE, re.M):
        for source in sources.split():
            assert source == "." or list(REPO.glob(source)), source


def test_the_image_builds_the_default_release_and_runs_it():
    assert set(re.findall(r"^ARG NWAKU_TAG=(\S+)$", DOCKERFILE, re.M)) == {DEFAULT_NWAKU_TAG}
    # the image's local.yaml names the tag it built, which adopt-nwaku installs and the studies run
    assert '"    tag: ${NWAKU_TAG}"' in DOCKERFILE


@pytest.mark.parametrize("choice", ["all", "essential"])
def test_the_image_builds_nwaku_with_the_patches_its_tiers_choose(choice):
    """NWAKU_PATCHES picks the tiers from the series files as stack.nwaku.patches does."""
    selection = re.search(r"(case \"\$NWAKU_PATCHES\".*?); \\\n\s*NWAKU_MAKE_FLAGS", DOCKERFILE, re.S).group(1)
    script = (selection.replace("\\\n", "\n").replace("/src/nwaku-patches", str(REPO / "nwaku-patches"))
              + '\nprintf "%s\\n" $patches')
    listed = subprocess.run(["bash", "-c", script], env={"NWAKU_PATCHES": choice, "NWAKU_TAG": DEFAULT_NWAKU_TAG},
                            capture_output=True, text=True, check=True).stdout.split()
    expected = checkout.build_patches(DEFAULT_NWAKU_TAG, "orc", choice)
    assert [Path(p).name for p in listed] == [patch.path.name for patch in expected]


def run_in_image(engine: str, *command: str, timeout: int) -> subprocess.CompletedProcess:
    return subprocess.run([engine, "run", "--rm", *shlex.split(os.environ.get(EXTRA_ARGS_ENV, "")),
                           "--entrypoint", command[0], IMAGE, *command[1:]],
                          capture_output=True, text=True, timeout=timeout)


def engine_with_image() -> tuple[str | None, str]:
    """An engine that holds the image and can start a container from it here, or why there is none."""
    for engine in ("podman", "docker"):
        if shutil.which(engine) and subprocess.run([engine, "image", "inspect", IMAGE], capture_output=True).returncode == 0:
            started = run_in_image(engine, "true", timeout=300)
            if started.returncode != 0:
                return None, (f"{engine} cannot start a container here ({started.stderr.strip()[-300:]}); "
                              f"give it what this host needs in ${EXTRA_ARGS_ENV} (docs/running.md)")
            return engine, ""
    return None, f"no podman or docker here with an image named {IMAGE} (docs/running.md builds it)"


def test_the_image_runs_a_tiny_study_on_its_own_stack():
    engine, reason = engine_with_image()
    if engine is None:
        pytest.skip(reason)
    done = run_in_image(engine, "python", "-m", "pytest", "-q", "tests/test_stack.py::test_tiny_study_end_to_end",
                        timeout=1800)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
