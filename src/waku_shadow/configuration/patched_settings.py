"""Settings nwaku reads only through one of nwaku-patches/<tag>/, checked against the patches the
study's build applies (stack.nwaku.tag and stack.nwaku.patches): an experiment's setting whose
patch the build lacks is refused; one of shadow's switches resolves to false."""

from __future__ import annotations

from typing import TYPE_CHECKING

from waku_shadow import checkout
from waku_shadow.configuration import schema

if TYPE_CHECKING:
    from waku_shadow.configuration.loader import Problems

# an experiment's settings, by the number of the patch that reads them: refused where the build
# lacks the patch. None of these patches is of the speed tier, so a build lacks one only where the
# tag's folder does.
PATCHED_SETTINGS = {
    "libp2p.stream_muxer": "0013",
    "rln.epoch": "0011",
    "gossipsub.prune_only_removed": "0014",
    "gossipsub.subscribe_before_dials": "0038",
    "libp2p.sequential_dials": "0015",
    "gossipsub.flood_publish": "0016",
    "gossipsub.flood_publish_bandwidth": "0016",
    "gossipsub.idontwant_on_publish": "0016",
    "gossipsub.preamble": "0016",
    "light_clients.service_nodes": "0039",
    "light_clients.clients": "0039",
    "network.shards_per_node": "0040",
}
# shadow's switches, on by default, by the number of the patch that reads them: where the build
# lacks the patch (an older tag's set, or stack.nwaku.patches: essential) the switch resolves to
# false, what the nodes then do, instead of being refused: a study that says nothing of them asks
# for them, so refusing would refuse every study on such a build, and none changes a run's results
# (all but 0023 only save time or memory; 0023 changes only runs that would otherwise never end).
SWITCH_PATCHES = {
    "nwaku_copy_once": "0006",
    "nwaku_poll_once_per_burst": "0007",
    "nwaku_hash_once": "0017",
    "nwaku_rdhup_only_with_reader": "0023",
    "nwaku_null_cipher": "0025",
    "nwaku_select_only_to_wait": "0026",
    "nwaku_stand_in_key_exchange": "0027",
    "nwaku_without_health_loop": "0029",
    "nwaku_without_exception_traces": "0033",
}
# tags of nwaku's master branch: nim-libp2p 2.0, whose preamble is no build define but a run-time
# extension negotiated on /meshsub/1.3.0 only, which nwaku's relay peers do not speak
MASTER_TAG_PREFIX = "master-"


def build_patch_numbers(nwaku: dict, found: Problems) -> set[str] | None:
    """The numbers of the tag's patches the study's nwaku build applies (the resolved stack.nwaku);
    None, with the problem recorded, for a tag the project has no patches for."""
    tag = nwaku["tag"]
    if tag not in (supported := checkout.nwaku_tags()):
        found.add("stack.nwaku.tag", f"{tag} has no patch folder nwaku-patches/{tag}/; supported: {', '.join(supported)}")
        return None
    return checkout.patch_numbers(tag, nwaku["patches"])


def switch_off_without_their_patch(resolved: dict, built: set[str] | None) -> None:
    """Set each of shadow's switches whose patch the build lacks to false in the resolved config."""
    if built is None:
        return
    for key, number in SWITCH_PATCHES.items():
        if number not in built:
            resolved["shadow"][key] = False


def check(cfg: dict, built: set[str] | None, found: Problems) -> None:
    """Record every setting of ``cfg`` that the build's patches do not read."""
    if built is None:
        return
    tag = cfg["stack"]["nwaku"]["tag"]
    unset = schema.with_defaults({}, schema.schema())
    for key, number in PATCHED_SETTINGS.items():
        section, name = key.split(".")
        if cfg[section][name] != unset[section][name] and number not in built:
            found.add(key, f"nwaku {tag} does not read it: nwaku-patches/{tag}/ has no patch {number}")
    if cfg["gossipsub"]["preamble"] and tag.startswith(MASTER_TAG_PREFIX):
        found.add("gossipsub.preamble", f"nwaku {tag} builds nim-libp2p 2.0, which has no -d:libp2p_gossipsub_1_4: "
                  "its preamble is an extension negotiated on /meshsub/1.3.0 only, which nwaku's relay peers do not speak")
