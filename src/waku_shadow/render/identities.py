"""Node identities: seeded secp256k1 nodekeys and the libp2p peer IDs nwaku derives from them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
_BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_LIBP2P_KEY_TYPE_SECP256K1 = 2
_MULTIHASH_IDENTITY = 0x00


@dataclass(frozen=True)
class Identity:
    index: int
    host: str
    ip: str
    nodekey: str  # 64 hex digits, as nwaku's --nodekey takes it
    peer_id: str

    @property
    def short_peer_id(self) -> str:
        return short_peer_id(self.peer_id)


def base58btc(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    encoded = ""
    while number:
        number, remainder = divmod(number, 58)
        encoded = _BASE58_ALPHABET[remainder] + encoded
    leading_zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * leading_zeros + encoded


def peer_id_from_nodekey(nodekey_hex: str) -> str:
    """The libp2p peer ID of a secp256k1 private key.

    The public key is the 33-byte compressed point, wrapped in libp2p's
    protobuf PublicKey {Type: Secp256k1, Data: ...}; keys of at most 42 bytes
    are hashed with the identity multihash, and the result is base58btc.
    """
    private = ec.derive_private_key(int(nodekey_hex, 16), ec.SECP256K1())
    public = private.public_key().public_bytes(Encoding.X962, PublicFormat.CompressedPoint)
    protobuf = bytes([0x08, _LIBP2P_KEY_TYPE_SECP256K1, 0x12, len(public)]) + public
    multihash = bytes([_MULTIHASH_IDENTITY, len(protobuf)]) + protobuf
    return base58btc(multihash)


def short_peer_id(peer_id: str) -> str:
    """nim-libp2p's shortLog(PeerId): the first three characters, '*', the last six."""
    if len(peer_id) <= 10:
        return peer_id
    return peer_id[:3] + "*" + peer_id[-6:]


def host_name(index: int, relay_nodes: int | None = None) -> str:
    """node0000 ... for relay nodes; client0000 ... for the light clients after them."""
    if relay_nodes is not None and index >= relay_nodes:
        return f"client{index - relay_nodes:04d}"
    return f"node{index:04d}"


def host_ip(index: int) -> str:
    """A fixed address per host: 10.x.y.z with z in 1..250."""
    high, low = divmod(index, 250)
    return f"10.{high // 250}.{high % 250}.{low + 1}"


def generate(nodes: int, seed: int, clients: int = 0) -> list[Identity]:
    """Deterministic identities for ``nodes`` relay hosts and ``clients`` light clients after them.

    Keys whose short peer ID (what nwaku logs as from_peer_id) would repeat an
    earlier one are skipped, so every logged short ID names exactly one node.
    """
    identities: list[Identity] = []
    seen_short: set[str] = set()
    counter = 0
    while len(identities) < nodes + clients:
        digest = hashlib.sha256(f"waku-shadow nodekey seed={seed} n={counter}".encode()).digest()
        counter += 1
        scalar = int.from_bytes(digest, "big")
        if not 0 < scalar < SECP256K1_ORDER:
            continue
        nodekey = digest.hex()
        peer_id = peer_id_from_nodekey(nodekey)
        if short_peer_id(peer_id) in seen_short:
            continue
        seen_short.add(short_peer_id(peer_id))
        index = len(identities)
        identities.append(Identity(index, host_name(index, nodes), host_ip(index), nodekey, peer_id))
    return identities
