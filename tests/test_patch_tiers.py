"""nwaku-patches/<folder>/series: each patch's place and tier, the subset stack.nwaku.patches
chooses, the build folder, identity and settings that follow from it."""

import json
import re
from pathlib import Path

import pytest
from conftest import REPO

from waku_shadow import checkout, cli
from waku_shadow.configuration import loader, patched_settings
from waku_shadow.errors import ConfigError
from waku_shadow.render import nwaku
from waku_shadow.stack import builds

PATCH_FOLDERS = [REPO / checkout.NWAKU_PATCHES / tag for tag in checkout.nwaku_tags()] + [
    REPO / checkout.NWAKU_PATCHES / checkout.NIM_PATCHES]
SETTINGS_READ_BY_PATCHES = [value for name, value in vars(nwaku).items() if name.startswith("ENV_") and isinstance(value, str)
                            and value.startswith("WAKU_SIM_")] + list(nwaku.ENV_GOSSIPSUB.values())


def patch_folder(tmp_path, *names, series=None):
    folder = tmp_path / "v9.9.9"
    folder.mkdir()
    for name in names:
        (folder / name).write_text(f"waku-shadow patch {name[:4]}\n")
    if series is not None:
        (folder / checkout.SERIES).write_text(series)
    return folder


@pytest.mark.parametrize("folder", PATCH_FOLDERS, ids=lambda folder: folder.name)
def test_every_shipped_patch_has_its_place_and_tier(folder):
    listed = checkout.series(folder)
    assert {patch.path.name for patch in listed} == {path.name for path in folder.glob("*.patch")}
    # the Dockerfile passes the folder's *.patch, which the shell sorts by name: the series must agree
    assert [patch.path.name for patch in listed] == sorted(patch.path.name for patch in listed)


def test_a_series_gives_the_order_and_tiers_and_allows_comments(tmp_path):
    folder = patch_folder(tmp_path, "0001-a.patch", "0002-b.patch", "0003-c.patch", series=(
        "# a comment line\n\n0002-b.patch speed   # applied first here\n0001-a.patch meaning\n0003-c.patch switch\n"))
    assert [(patch.path, patch.tier, patch.number) for patch in checkout.series(folder)] == [
        (folder / "0002-b.patch", "speed", "0002"), (folder / "0001-a.patch", "meaning", "0001"),
        (folder / "0003-c.patch", "switch", "0003")]


@pytest.mark.parametrize("series, message", [
    ("0001-a.patch meaning\n", r"0002-b.patch: not in .*/v9.9.9/series; give it its place and tier there$"),
    ("0001-a.patch meaning\n0002-b.patch speed\n0003-gone.patch speed\n",
     r"series, line 3: 0003-gone.patch is not a file of .*/v9.9.9$"),
    ("0001-a.patch meaning\n0002-b.patch fast\n", r"series, line 2: 0002-b.patch's tier 'fast' is none of meaning, switch, speed$"),
    ("0001-a.patch\n0002-b.patch speed\n", r"series, line 1: '0001-a.patch' is not a patch's file name and its tier$"),
    ("0001-a.patch meaning\n0002-b.patch speed\n0001-a.patch speed\n", r"series, line 3: 0001-a.patch is listed twice$"),
    (None, r"v9.9.9/series: missing; it lists the folder's patches in order, each with its tier"),
])
def test_a_series_that_disagrees_with_its_folder_is_refused_naming_the_file(tmp_path, series, message):
    folder = patch_folder(tmp_path, "0001-a.patch", "0002-b.patch", series=series)
    with pytest.raises(ConfigError, match=message):
        checkout.series(folder)


def test_essential_is_the_meaning_and_switch_tiers_in_series_order_without_nims_patches():
    every = checkout.build_patches("v0.38.1", "orc", "all")
    essential = checkout.build_patches("v0.38.1", "orc", "essential")
    assert every[-1].path.parent.name == checkout.NIM_PATCHES
    assert essential == [patch for patch in every if patch.tier != "speed"]
    assert {patch.tier for patch in essential} == {"meaning", "switch"}
    assert checkout.build_patches("v0.38.1", "refc", "all") == [patch for patch in every if patch.path.parent.name == "v0.38.1"]


@pytest.mark.parametrize("tag", checkout.nwaku_tags())
def test_an_essential_build_reads_every_setting_but_the_speed_switches(tag):
    """Every variable a patch of the tag reads, apart from the switches of speed patches, is read by
    a patch of its essential subset: essential keeps what gives a run its meaning and every experiment."""
    speed_only = {nwaku.PATCH_SWITCHES[key] for key, number in patched_settings.SWITCH_PATCHES.items()
                  if any(p.number == number and p.tier == "speed" for p in checkout.patches(tag))}
    read_by = {patch.number: patch.path.read_text() for patch in checkout.patches(tag)}
    essential = {patch.number for patch in checkout.chosen(checkout.patches(tag), "essential")}
    for variable in set(SETTINGS_READ_BY_PATCHES) - speed_only:
        readers = {number for number, text in read_by.items() if variable in text}
        assert not readers or readers & essential, f"{variable} is read only by speed patches {sorted(readers)}"


@pytest.mark.parametrize("tag", checkout.nwaku_tags())
def test_each_patched_setting_names_the_patch_that_reads_it(tag):
    by_number = {patch.number: patch for patch in checkout.patches(tag)}
    assert set(patched_settings.SWITCH_PATCHES) == set(nwaku.PATCH_SWITCHES)
    for key, number in patched_settings.SWITCH_PATCHES.items():
        if number in by_number:
            assert nwaku.PATCH_SWITCHES[key] in by_number[number].path.read_text()
    for key, number in patched_settings.PATCHED_SETTINGS.items():
        # an experiment's patch is never left out of an essential build
        assert by_number.get(number) is None or by_number[number].tier != "speed", key


def test_the_build_folder_and_patch_set_differ_between_all_and_essential():
    every = [patch.path for patch in checkout.build_patches("v0.38.1", "orc", "all")]
    essential = [patch.path for patch in checkout.build_patches("v0.38.1", "orc", "essential")]
    assert builds.patch_set_hash(every) != builds.patch_set_hash(essential)
    all_name = builds.nwaku_build_name("v0.38.1", "orc", "malloc", every)
    # all keeps the name builds had before the tiers: the folder's patches by name, then Nim's
    by_name = sorted((REPO / "nwaku-patches/v0.38.1").glob("*.patch")) + sorted((REPO / "nwaku-patches/nim").glob("*.patch"))
    assert all_name == f"v0.38.1-orc-malloc-patches-{builds.patch_set_hash(by_name)}"
    essential_name = builds.nwaku_build_name("v0.38.1", "orc", "malloc", essential, (), "essential")
    assert essential_name == f"v0.38.1-orc-malloc-essential-patches-{builds.patch_set_hash(essential)}"
    studies = {choice: loader.resolve({"study": "x", "stack": {"nwaku": {"patches": choice}}}) for choice in ("all", "essential")}
    assert {choice: builds.nwaku_build_dir(study).name for choice, study in studies.items()} == {
        "all": all_name, "essential": essential_name}


def test_with_essential_the_speed_switches_are_off_and_the_others_kept():
    default = loader.resolve({"study": "x"})
    essential = loader.resolve({"study": "x", "shadow": {"nwaku_null_cipher": True},
                                "libp2p": {"stream_muxer": "mplex"}, "stack": {"nwaku": {"patches": "essential"}}})
    tiers = {patch.number: patch.tier for patch in checkout.patches("v0.38.1")}
    speed = [key for key, number in patched_settings.SWITCH_PATCHES.items() if tiers[number] == "speed"]
    assert len(speed) == len(patched_settings.SWITCH_PATCHES) - 1  # all but 0023, which ends a busy wait
    assert all(getattr(default, key) for key in speed) and not any(getattr(essential, key) for key in speed)
    # the resolved config, and so each run's config, says what the nodes run with
    assert not any(essential.study_config()["shadow"][key] for key in speed)
    assert essential.nwaku_rdhup_only_with_reader and essential.stream_muxer == "mplex"
    environment = nwaku.environment(essential)
    assert not {nwaku.PATCH_SWITCHES[key] for key in speed} & set(environment)
    assert environment[nwaku.ENV_RDHUP_ONLY_WITH_READER] == "1"


def test_a_tag_without_a_switchs_patch_runs_with_the_switch_off():
    older = loader.resolve({"study": "x", "stack": {"nwaku": {"tag": "v0.37.1-beta"}}})
    assert older.nwaku_copy_once and older.nwaku_hash_once  # 0006 and 0017 are in its set
    assert not older.nwaku_null_cipher and not older.nwaku_rdhup_only_with_reader  # 0025 and 0023 are not


def wakunode2(tmp_path) -> Path:
    binary = tmp_path / "wakunode2"
    binary.write_text("#!/bin/sh\necho 'version v0.38.1 (stand-in)'\n")
    binary.chmod(0o755)
    return binary


def test_the_identity_records_the_tier_choice_and_each_patchs_tier(tmp_path):
    essential = checkout.build_patches("v0.38.1", "orc", "essential")
    out = tmp_path / "identity.json"
    assert cli.main(["identify-nwaku", "--binary", str(wakunode2(tmp_path)), "--tag", "v0.38.1", "--built-from", "here",
                     "--out", str(out), "--patch-tiers", "essential", *(str(patch.path) for patch in essential)]) == 0
    identity = json.loads(out.read_text())
    assert identity["patch_tiers"] == "essential"
    assert [(p["file"], p["tier"]) for p in identity["patches"]] == [(p.path.name, p.tier) for p in essential]
    assert identity["patch_set"] == builds.patch_set_hash([patch.path for patch in essential])


def test_a_prebuilt_binary_has_no_tier_choice(tmp_path):
    identity = builds.nwaku_identity("v0.38.1", None, wakunode2(tmp_path), "prebuilt")
    assert identity["patch_tiers"] is None and identity["patches"] is None


def test_a_patch_is_identified_by_its_folders_series(tmp_path):
    folder = patch_folder(tmp_path, "0001-a.patch", series="0001-a.patch meaning\n")
    assert checkout.listed_patch(folder / "0001-a.patch") == checkout.Patch(folder / "0001-a.patch", "meaning")
    with pytest.raises(ConfigError, match=re.escape(f"{folder}/0002-b.diff: not in {folder}/series")):
        checkout.listed_patch(folder / "0002-b.diff")
    (folder / "0002-b.patch").write_text("a patch the series does not list\n")
    with pytest.raises(ConfigError, match=re.escape(f"{folder}/0002-b.patch: not in {folder}/series")):
        checkout.listed_patch(folder / "0001-a.patch")
