"""The publishing schedule of one run: who publishes what, when, and the message's hash."""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import layout, nwaku
from .study import Study
from .topology import choose_publishers


@dataclass(frozen=True)
class Message:
    index: int
    warmup: bool
    publisher: int
    size_bytes: int
    publish_at_ns: int  # simulated time since the start of the run
    timestamp_ns: int  # the WakuMessage timestamp: the scheduled time on nwaku's (simulated) clock
    payload: bytes
    msg_hash: str

    def rest_body(self) -> str:
        return json.dumps(
            {
                "payload": base64.b64encode(self.payload).decode(),
                "contentTopic": nwaku.CONTENT_TOPIC,
                "timestamp": self.timestamp_ns,
            }
        )


def build(study: Study, size_bytes: int) -> list[Message]:
    """Warm-up messages first, then every publisher's measured messages, round-robin."""
    publishers = choose_publishers(study.topology, study.nodes, study.publishers, study.seed)
    messages = []
    for index in range(study.messages_per_run):
        publish_at = study.bootstrap_ns + index * study.interval_ns
        timestamp = nwaku.SIMULATION_EPOCH_NS + publish_at
        rng = random.Random(f"waku-shadow payload seed={study.seed} size={size_bytes} message={index}")
        payload = rng.randbytes(size_bytes)
        messages.append(
            Message(
                index=index,
                warmup=index < study.warmup_messages,
                publisher=publishers[index % len(publishers)],
                size_bytes=size_bytes,
                publish_at_ns=publish_at,
                timestamp_ns=timestamp,
                payload=payload,
                msg_hash=nwaku.message_hash(nwaku.PUBSUB_TOPIC, payload, nwaku.CONTENT_TOPIC, timestamp),
            )
        )
    return messages


def to_frame(messages: list[Message], hosts: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "message": [m.index for m in messages],
            "msg_hash": [m.msg_hash for m in messages],
            "warmup": [m.warmup for m in messages],
            "publisher": [hosts[m.publisher] for m in messages],
            "size_bytes": [m.size_bytes for m in messages],
            "scheduled_ns": [m.publish_at_ns for m in messages],
        }
    )


def write(messages: list[Message], hosts: list[str], run_dir: Path) -> None:
    bodies = run_dir / layout.MESSAGES
    bodies.mkdir(parents=True, exist_ok=True)
    for message in messages:
        (bodies / body_name(message)).write_text(message.rest_body())
    to_frame(messages, hosts).to_csv(run_dir / layout.SCHEDULE, index=False)


def body_name(message: Message) -> str:
    return f"message-{message.index:04d}.json"
