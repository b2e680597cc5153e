"""The library finds the repository it works from, or says it cannot."""

import pytest
from conftest import REPO

from waku_shadow import checkout
from waku_shadow.errors import StackError
from waku_shadow.stack import builds


def test_the_checkout_is_found_from_the_package():
    assert checkout.root() == REPO


def test_an_install_without_its_repository_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv(checkout.REPOSITORY_ENV, str(tmp_path))
    with pytest.raises(StackError, match="repository not found .* install it from a checkout"):
        checkout.patches("v0.37.1-beta")


def test_patches_come_per_nwaku_tag():
    names = [p.path.name for p in checkout.patches("v0.37.1-beta")]
    assert names[0].startswith("0001-")
    assert "0008-message-lines-at-notice.patch" in names  # v0.37 logs the relay's lines at DEBUG
    assert "0008-message-lines-at-notice.patch" not in [p.path.name for p in checkout.patches("v0.36.0")]


def test_a_tag_without_patches_names_the_tags_that_have_them():
    with pytest.raises(StackError, match="no patches for nwaku v9.9.9 .* carries patches for master-69fbffa3a, v0.36.0, v0.37.1-beta, v0.38.1$"):
        checkout.patches("v9.9.9")


def test_the_build_folder_names_the_memory_settings():
    patches = [p.path for p in checkout.patches("v0.37.1-beta")]
    orc = builds.nwaku_build_name("v0.37.1-beta", "orc", "malloc", patches)
    assert orc.startswith("v0.37.1-beta-orc-malloc-patches-")
    assert builds.nwaku_build_name("v0.37.1-beta", "refc", "nim", patches) != orc
    assert builds.nwaku_build_name("v0.37.1-beta", "orc", "malloc", patches, ["NIMFLAGS=-d:x"]) != orc
