import pytest

from waku_shadow.render import identities as ids

# nodekey -> peer ID pairs printed by real nwaku (docs/tutorial/rln-chat2-local-test.md
# in waku-org/nwaku: each node's --nodekey and the /p2p/ address it listens on).
NWAKU_PRINTED = [
    ("f157b19b13e9ee818acfc9d3d7eec6b81f70c0a978dec19def261172acbe26e6", "16Uiu2HAkyTos6LeGrj1YJyA3WYzp9qKQGCsxbtvyoBRHSu9PCrQZ"),
    ("9ab635854ffe8fed32b17d7ef38e0b2f354ca1f3283b7f78fb77227004d2cbe6", "16Uiu2HAmKdCdP89q6CwLc6PeFDJnVR1EmM7fTgtphHiacSNBnuAz"),
    ("0aa89d7f27300c9fb4e119acc225c8873a3bf96bbb4c82045c94934bcc6a6af8", "16Uiu2HAm1bEDWZqjxfYRvGo1UpjaejkenJVmMFMPMDmgWWGkREJu"),
]


@pytest.mark.parametrize("nodekey, peer_id", NWAKU_PRINTED)
def test_peer_id_matches_nwaku(nodekey, peer_id):
    assert ids.peer_id_from_nodekey(nodekey) == peer_id


def test_short_peer_id_is_nim_libp2p_shortlog():
    assert ids.short_peer_id("16Uiu2HAkyTos6LeGrj1YJyA3WYzp9qKQGCsxbtvyoBRHSu9PCrQZ") == "16U*9PCrQZ"


def test_base58_keeps_leading_zero_bytes():
    assert ids.base58btc(b"\0\0\x01") == "112"


def test_generation_is_seeded_and_unique():
    first = ids.generate(300, seed=3)
    assert first == ids.generate(300, seed=3)
    assert first != ids.generate(300, seed=4)
    assert len({i.short_peer_id for i in first}) == 300
    assert len({i.ip for i in first}) == 300
    assert first[0].host == "node0000" and first[299].ip == "10.0.1.50"


def test_host_addresses_never_end_in_zero():
    assert all(not ids.host_ip(i).endswith(".0") for i in range(5000))
