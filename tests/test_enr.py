import base64

import pytest

from waku_shadow.render import enr
from waku_shadow.render import identities as ids

# EIP-778's example record: its private key, seq 1, ip 127.0.0.1, udp 30303, no tcp.
EIP778_KEY = "b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291"
EIP778_TEXT = (
    "enr:-IS4QHCYrYZbAKWCBRlAy5zzaDZXJBGkcnh4MHcBFZntXNFrdvJjX04jRzjzCBOonrkTfj499SZuOh8R33Ls8RRcy5wBgmlkgnY0"
    "gmlwhH8AAAGJc2VjcDI1NmsxoQPKY0yuDUmstAHYpMa2_oxVtw0RW_QAdpzBQA8yWM0xOIN1ZHCCdl8"
)
# A waku.test fleet node's record, as nwaku built it (docs/faq.md in logos-delivery v0.38.1).
FLEET_TEXT = (
    "enr:-QESuEC1p_s3xJzAC_XlOuuNrhVUETmfhbm1wxRGis0f7DlqGSw2FM-p2Ugl_r25UHQJ3f1rIRrpzxJXSMaJe4yk1XFSAYJpZIJ2"
    "NIJpcISygI2rim11bHRpYWRkcnO4XAArNiZub2RlLTAxLmRvLWFtczMud2FrdS50ZXN0LnN0YXR1c2ltLm5ldAZ2XwAtNiZub2RlLTAx"
    "LmRvLWFtczMud2FrdS50ZXN0LnN0YXR1c2ltLm5ldAYfQN4DgnJzkwABCAAAAAEAAgADAAQABQAGAAeJc2VjcDI1NmsxoQJATXRSRSUy"
    "Tw_QLB6H_U3oziVQgNRgrXpK7wp2AMyNxYN0Y3CCdl-DdWRwgiMohXdha3UyDw"
)
KEY = ids.generate(1, seed=7)[0].nodekey


def relay_node(shards, **extra):
    return enr.node_record(KEY, "10.0.0.1", 60000, 9000, cluster_id=42, shards=shards, **extra)


def shards_of(rs: bytes) -> tuple[int, tuple[int, ...]]:
    count = rs[2]
    assert len(rs) == 3 + 2 * count
    return int.from_bytes(rs[:2], "big"), tuple(int.from_bytes(rs[3 + 2 * i : 5 + 2 * i], "big") for i in range(count))


def test_the_eip778_example_record_is_reproduced_byte_for_byte():
    text = enr.signed_record(EIP778_KEY, {"ip": bytes([127, 0, 0, 1]), "udp": 30303}, seq=1)
    assert text == EIP778_TEXT
    assert enr.decode(text) == {
        "seq": 1, "id": b"v4", "ip": bytes([127, 0, 0, 1]), "udp": 30303,
        "secp256k1": bytes.fromhex("03ca634cae0d49acb401d8a4c6b6fe8c55b70d115bf400769cc1400f3258cd3138"),
    }


def test_a_record_nwaku_built_decodes_and_verifies():
    fields = enr.decode(FLEET_TEXT)
    assert (fields["seq"], fields["tcp"], fields["udp"], fields["waku2"]) == (1, 30303, 9000, b"\x0f")
    assert shards_of(fields["rs"]) == (1, tuple(range(8)))


def test_same_inputs_give_the_same_text():
    assert relay_node((0,)) == relay_node((0,))
    assert relay_node((0,)) != relay_node((1,))
    assert relay_node((0,), seq=2) != relay_node((0,))


def test_a_relay_only_node_has_exactly_nwakus_fields():
    fields = enr.decode(relay_node((0,)))
    assert fields == {
        "seq": 1, "id": b"v4", "ip": bytes([10, 0, 0, 1]), "tcp": 60000, "udp": 9000,
        "multiaddrs": b"", "rs": b"\x00\x2a\x01\x00\x00", "waku2": b"\x01", "secp256k1": fields["secp256k1"],
    }


def test_the_public_key_is_the_one_in_the_peer_id():
    public = enr.decode(relay_node((0,)))["secp256k1"]
    protobuf = bytes([0x08, 2, 0x12, 33]) + public  # libp2p PublicKey{Secp256k1, public}, identity multihash
    assert ids.base58btc(bytes([0, len(protobuf)]) + protobuf) == ids.peer_id_from_nodekey(KEY)


@pytest.mark.parametrize("shards", [(0,), (1, 3), (7, 2, 5)])
def test_shards_roundtrip_as_an_indices_list_in_the_given_order(shards):
    fields = enr.decode(relay_node(shards))
    assert shards_of(fields["rs"]) == (42, shards) and "rsv" not in fields


def test_64_shards_or_more_are_a_bit_vector():
    fields = enr.decode(relay_node(tuple(range(64))))
    rsv = fields["rsv"]
    assert "rs" not in fields and len(rsv) == 130 and rsv[:2] == b"\x00\x2a"
    assert rsv[2:10] == b"\xff" * 8 and rsv[10:] == bytes(120)
    sparse = enr.decode(relay_node((0, 9, 1023) + tuple(range(100, 161))))["rsv"]
    assert sparse[2] == 0x01 and sparse[3] == 0x02 and sparse[129] == 0x80


def test_capabilities_are_the_rfc31_bits():
    fields = enr.decode(relay_node((0,), capabilities=("relay", "store", "filter", "lightpush")))
    assert fields["waku2"] == b"\x0f"
    with pytest.raises(ValueError, match="unknown capabilities"):
        relay_node((0,), capabilities=("gossip",))


def test_the_started_node_announces_its_tcp_multiaddr_and_discv5_can_be_off():
    fields = enr.decode(enr.node_record(KEY, "10.1.2.3", 60000, None, cluster_id=42, shards=(0,), seq=3, tcp_multiaddr=True))
    assert fields["multiaddrs"] == bytes.fromhex("0008" "040a010203" "06ea60")  # /ip4/10.1.2.3/tcp/60000
    assert fields["seq"] == 3 and "udp" not in fields


@pytest.mark.parametrize(
    "nodekey, problem",
    [
        ("ab" * 31, "64 hex digits"),
        ("zz" * 32, "not hexadecimal"),
        ("0" * 64, "group order"),
        (format(ids.SECP256K1_ORDER, "064x"), "group order"),
    ],
)
def test_a_bad_nodekey_is_named(nodekey, problem):
    with pytest.raises(ValueError, match=problem):
        enr.node_record(nodekey, "10.0.0.1", 60000, 9000, cluster_id=42, shards=(0,))


def test_a_tampered_or_oversized_record_is_refused():
    text = relay_node((0,))
    raw = bytearray(base64.urlsafe_b64decode(text[4:] + "=" * (-len(text[4:]) % 4)))
    raw[-1] ^= 0x02  # the last field, waku2: relay -> relay + store
    tampered = "enr:" + base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    with pytest.raises(ValueError, match="signature"):
        enr.decode(tampered)
    with pytest.raises(ValueError, match="300"):
        relay_node(tuple(range(64)), tcp_multiaddr=True)
