"""Ethereum Node Records (EIP-778, "enr:" text) as nwaku v0.38.1 builds its own, from a nodekey.

A relay-only node (--relay=true, --store/--filter/--lightpush=false, mix and store-sync off by
default) gets waku2 = 0x01: only the relay bit (waku_conf_builder.nim:658-665, capabilities.nim).
"""

from __future__ import annotations

import base64
import ipaddress
import string
from collections.abc import Mapping

from coincurve import PrivateKey, PublicKey
from coincurve.ecdsa import cdata_to_der, deserialize_compact
from Crypto.Hash import keccak

from .identities import SECP256K1_ORDER

MAX_ENR_SIZE = 300  # nim-eth enr.nim maxEnrSize
SHARDING_INDICES_LIST_MAX_LENGTH = 64  # waku_enr/sharding.nim: from this many shards on, "rsv"
MAX_SHARD_INDEX = 1023
CAPABILITY_BITS = {"relay": 0, "store": 1, "filter": 2, "lightpush": 3, "sync": 4, "mix": 5}


def _rlp_header(size: int, offset: int) -> bytes:
    """RLP prefix of a payload of ``size`` bytes: offset 0x80 for strings, 0xC0 for lists."""
    if size < 56:
        return bytes([offset + size])
    width = (size.bit_length() + 7) // 8
    return bytes([offset + 55 + width]) + size.to_bytes(width, "big")


def _rlp(item: bytes | int | list) -> bytes:
    """RLP of a byte string, a non-negative integer (minimal big-endian) or a list."""
    if isinstance(item, list):
        payload = b"".join(_rlp(x) for x in item)
        return _rlp_header(len(payload), 0xC0) + payload
    if isinstance(item, int):
        item = item.to_bytes((item.bit_length() + 7) // 8, "big")
    if len(item) == 1 and item[0] < 0x80:
        return item
    return _rlp_header(len(item), 0x80) + item


def _rlp_item(data: bytes, at: int) -> tuple[bool, int, int]:
    """(is_list, payload start, end) of the RLP item at ``data[at]``."""
    first = data[at]
    if first < 0x80:
        return False, at, at + 1
    base = 0xC0 if first >= 0xC0 else 0x80
    width = max(first - base - 55, 0)
    start = at + 1 + width
    size = int.from_bytes(data[at + 1 : start], "big") if width else first - base
    if start + size > len(data):
        raise ValueError("ENR: truncated RLP")
    return base == 0xC0, start, start + size


def _keccak256(data: bytes) -> bytes:
    return keccak.new(data=data, digest_bits=256).digest()


def _private_key(nodekey_hex: str) -> PrivateKey:
    if len(nodekey_hex) != 64:
        raise ValueError(f"nodekey must be 64 hex digits, got {len(nodekey_hex)} characters")
    if not set(nodekey_hex) <= set(string.hexdigits):
        raise ValueError(f"nodekey is not hexadecimal: {nodekey_hex!r}")
    if not 0 < int(nodekey_hex, 16) < SECP256K1_ORDER:
        raise ValueError("nodekey is zero or not below the secp256k1 group order")
    return PrivateKey(bytes.fromhex(nodekey_hex))


def signed_record(nodekey_hex: str, pairs: Mapping[str, bytes | int], *, seq: int = 1) -> str:
    """EIP-778 "v4" record of ``pairs`` plus id and secp256k1, keys sorted, signed like nim-eth."""
    key = _private_key(nodekey_hex)
    fields = {**pairs, "id": b"v4", "secp256k1": key.public_key.format(compressed=True)}
    content = [seq] + [x for k in sorted(fields) for x in (k.encode(), fields[k])]
    recoverable = key.sign_recoverable(_keccak256(_rlp(content)), hasher=None)  # RFC 6979, low s
    raw = _rlp([recoverable[:64]] + content)
    if len(raw) > MAX_ENR_SIZE:
        raise ValueError(f"ENR is {len(raw)} bytes, above EIP-778's {MAX_ENR_SIZE}")
    return "enr:" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def node_record(
    nodekey_hex: str, ip: str, tcp_port: int, udp_port: int | None, *, cluster_id: int,
    shards: tuple[int, ...], capabilities: tuple[str, ...] = ("relay",), seq: int = 1,
    tcp_multiaddr: bool = False,
) -> str:
    """The record nwaku's enrConfiguration builds (seq 1); ``udp_port`` None when discv5 is off.

    "multiaddrs" is always there: empty at first; /ip4/<ip>/tcp/<port> with ``tcp_multiaddr``, as
    startWaku's updateAddressInENR sets it (seq 2), which discv5's newProtocol re-signs (seq 3).
    nwaku logs, at INFO, seq 1 as "DNS: discoverable ENR" and seq 3 as "Discv5: discoverable ENR".
    """
    unknown = set(capabilities) - CAPABILITY_BITS.keys()
    if unknown:
        raise ValueError(f"unknown capabilities: {sorted(unknown)}")
    if not 0 <= cluster_id <= 0xFFFF or any(not 0 <= s <= MAX_SHARD_INDEX for s in shards):
        raise ValueError(f"cluster {cluster_id} or shards {shards} out of range")
    address = ipaddress.IPv4Address(ip).packed
    multiaddrs = b""
    if tcp_multiaddr:  # u16 length, then binary /ip4 (code 4) /tcp (code 6)
        multiaddrs = b"\x00\x08\x04" + address + b"\x06" + tcp_port.to_bytes(2, "big")
    cluster = cluster_id.to_bytes(2, "big")
    if len(shards) >= SHARDING_INDICES_LIST_MAX_LENGTH:  # bit vector, shard 0 = low bit of byte 0
        vector = bytearray(128)
        for shard in shards:
            vector[shard // 8] |= 1 << (shard % 8)
        sharding = {"rsv": cluster + bytes(vector)}
    else:
        indices = b"".join(shard.to_bytes(2, "big") for shard in shards)
        sharding = {"rs": cluster + bytes([len(shards)]) + indices}
    pairs: dict[str, bytes | int] = {
        "ip": address, "tcp": tcp_port, "multiaddrs": multiaddrs, **sharding,
        "waku2": bytes([sum(1 << CAPABILITY_BITS[c] for c in set(capabilities))]),
    }
    if udp_port is not None:
        pairs["udp"] = udp_port
    return signed_record(nodekey_hex, pairs, seq=seq)


def decode(text: str) -> dict[str, bytes | int]:
    """Fields of an "enr:" text by key (seq, tcp, udp as ints), after checking its v4 signature."""
    if not text.startswith("enr:"):
        raise ValueError("ENR text must start with 'enr:'")
    body = text[4:]
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    if len(raw) > MAX_ENR_SIZE:
        raise ValueError(f"ENR is {len(raw)} bytes, above {MAX_ENR_SIZE}")
    is_list, at, end = _rlp_item(raw, 0) if raw else (False, 0, -1)
    if not is_list or end != len(raw):
        raise ValueError("ENR is not a single RLP list")
    items: list[tuple[bytes, bytes]] = []  # (value, whole encoding) per item
    while at < end:
        nested, start, stop = _rlp_item(raw, at)
        items.append((raw[at:stop] if nested else raw[start:stop], raw[at:stop]))
        at = stop
    if len(items) < 4 or len(items) % 2:
        raise ValueError("ENR has a wrong number of RLP items")
    keys = [k.decode() for k, _ in items[2::2]]
    if keys != sorted(set(keys)):
        raise ValueError("ENR keys are not sorted and unique")
    fields: dict[str, bytes | int] = {"seq": int.from_bytes(items[1][0], "big")}
    for key, (value, _) in zip(keys, items[3::2]):
        numeric = key in ("tcp", "udp", "tcp6", "udp6")
        fields[key] = int.from_bytes(value, "big") if numeric else value
    if fields.get("id") != b"v4" or not isinstance(fields.get("secp256k1"), bytes):
        raise ValueError("ENR is not of the v4 identity scheme")
    content = b"".join(encoded for _, encoded in items[1:])
    if len(items[0][0]) != 64:
        raise ValueError("ENR signature is not 64 bytes")
    signature = cdata_to_der(deserialize_compact(items[0][0]))
    digest = _keccak256(_rlp_header(len(content), 0xC0) + content)
    if not PublicKey(fields["secp256k1"]).verify(signature, digest, hasher=None):
        raise ValueError("ENR signature does not verify")
    return fields

