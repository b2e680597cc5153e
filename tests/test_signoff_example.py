"""docs/examples/waku-pr-signoff.yml, the sign-off a pull request's CI can run: not run here, but its
commands are checked against the Dockerfile and the sign-off they ask for."""

import re
import shlex
from types import SimpleNamespace

import yaml
from conftest import REPO

from waku_shadow import checkout
from waku_shadow.configuration import signoff, sources

EXAMPLE = yaml.safe_load((REPO / "docs/examples/waku-pr-signoff.yml").read_text())
DOCKERFILE = (REPO / "Dockerfile").read_text()


def commands() -> str:
    return "\n".join(step.get("run", "") for step in EXAMPLE["jobs"]["signoff"]["steps"])


def with_env(text: str) -> str:
    for name, value in EXAMPLE["env"].items():
        text = text.replace(f"${name}", str(value))
    return text


def test_its_build_arguments_and_paths_are_the_dockerfiles():
    for argument in re.findall(r"--build-arg (\w+)=", commands()):
        assert re.search(rf"^ARG {argument}=", DOCKERFILE, re.M), argument
    for context in re.findall(r"--build-context ([\w-]+)=", commands()):
        assert f"FROM scratch AS {context}" in DOCKERFILE, context
    assert "docker cp candidate:/opt/nwaku/wakunode2" in commands()
    assert "COPY --from=build /opt/nwaku/wakunode2 /opt/nwaku/wakunode2" in DOCKERFILE
    assert (REPO / "nwaku-patches" / EXAMPLE["env"]["BASE_TAG"]).is_dir()


def test_its_signoff_is_two_builds_on_the_small_battery():
    words = shlex.split(with_env(commands().split("docker run", 1)[1].split("\n      cat", 1)[0].replace("\\\n", " ")))
    config = words[words.index("--config") + 1]
    settings = SimpleNamespace(config_args=[config], config=None, configfiles=[])
    base, candidate = signoff.sides(settings)
    assert base.build["patches"] == candidate.build["patches"] == "essential"
    assert candidate.build["binary"] == "/candidate/wakunode2" and base.build["binary"] is None
    assert base.battery == candidate.battery == EXAMPLE["env"]["BATTERY"]
    study = sources.study_from_snakemake(signoff.study_config(base, settings))
    assert study.nodes == 200 and study.name == f"signoff-small-{base.label}"
    assert f"results/{base.battery_name}/" in commands()
    assert checkout.path(base.battery).is_file()
