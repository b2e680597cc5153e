"""What installs and cites the project: requirements.lock pins everything pyproject.toml asks for,
and the license files and CITATION.cff say what pyproject.toml says."""

import tomllib

import yaml
from conftest import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def locked() -> dict[str, str]:
    """requirements.lock's pins, by canonical package name."""
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            (specifier,) = requirement.specifier
            assert specifier.operator == "==", line
            pins[canonicalize_name(requirement.name)] = specifier.version
    return pins


def test_the_lock_pins_every_dependency_and_test_extra_at_a_version_pyproject_allows():
    pins = locked()
    for line in PYPROJECT["dependencies"] + PYPROJECT["optional-dependencies"]["test"]:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in requirements.lock: run pip-compile as its header says"
        assert requirement.specifier.contains(pins[name]), f"requirements.lock pins {name} {pins[name]}, pyproject asks {line}"


def test_the_license_files_and_the_citation_say_what_pyproject_says():
    assert PYPROJECT["license"] == "MIT OR Apache-2.0"
    assert PYPROJECT["license-files"] == ["LICENSE-MIT", "LICENSE-APACHE"]
    assert (REPO / "LICENSE-MIT").read_text().startswith("MIT License\n\nCopyright (c) ")
    assert "Apache License\n                           Version 2.0, January 2004" in (REPO / "LICENSE-APACHE").read_text()
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert (citation["title"], citation["version"], citation["license"]) == (PYPROJECT["name"], PYPROJECT["version"], ["MIT", "Apache-2.0"])
    (paper,) = citation["references"]
    assert paper["title"] == "Message Latency in Waku Relay with Rate Limiting Nullifiers"
