"""The publishing schedule of one run: who publishes what, when, and the message's hash."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.configuration.study import Study
from waku_shadow.errors import ConfigError
from waku_shadow.render import nwaku
from waku_shadow.render import light_clients, shards
from waku_shadow.render.light_clients import Roles
from waku_shadow.render.shards import ShardPlan
from waku_shadow.render.topology import choose_publishers

# what nwaku patch 0011 reads from a message's meta: "rln:<1 valid or 0 invalid>:<nullifier>"
PROOF_PREFIX = "rln:"


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
    spam: bool = False  # published by a spammer above RLN's rate limit (spam.*)
    meta: bytes = b""  # the stand-in for its RLN proof, when rln.epoch is set
    light_client: int | None = None  # the light client that lightpushes it to its service node, the publisher
    content_topic: str = nwaku.CONTENT_TOPIC
    shard: int = nwaku.SHARD

    def rest_body(self) -> str:
        body = {
            "payload": base64.b64encode(self.payload).decode(),
            "contentTopic": self.content_topic,
            "timestamp": self.timestamp_ns,
        }
        if self.meta:
            body["meta"] = base64.b64encode(self.meta).decode()
        if self.light_client is not None:
            return json.dumps({"pubsubTopic": shards.pubsub_topic(self.shard), "message": body})
        return json.dumps(body)


def build(study: Study, size_bytes: int, roles: Roles | None = None, shard_plan: ShardPlan | None = None) -> list[Message]:
    """Warm-up messages first, then every publisher's measured messages, round-robin (the relay
    publishers, then the light publishers, whose messages enter relay at their lightpush's service
    node); then the spammers' messages; each with its stand-in RLN proof when the study enforces the
    rate limit. A light publisher's messages are on its first content topic; the relay publishers'
    take the study's topics in turn, the k-th relay message topic k mod content_topics, so every
    topic gets its share whatever the number of publishers; the spammers' are on the first. On a
    cluster of several shards, a relay publisher's messages are on its shard's content topic."""
    roles = roles or light_clients.choose(study)
    shard_plan = shard_plan or shards.choose(study, choose_publishers(study.topology, study.nodes, study.publishers, study.seed))
    publishers = list(shard_plan.publishing_on)
    sources = [(p, None) for p in publishers] + [(roles.lightpush_of(c), c) for c in roles.light_publishers]
    messages, relayed = [], 0
    for index in range(study.messages_per_run):
        publisher, light_client = sources[index % len(sources)]
        shard = nwaku.SHARD
        if light_client is not None:
            topic = nwaku.content_topic(roles.topics_of(light_client)[0])
        elif shard_plan.count > 1:
            shard = shard_plan.publishing_on[publisher]
            topic = shards.content_topic(shard, shard_plan.count)
        else:
            topic, relayed = nwaku.content_topic(relayed % study.light_clients.content_topics), relayed + 1
        messages.append(_message(study, size_bytes, index, publisher, light_client,
                                 study.bootstrap_ns + index * study.interval_ns, topic, shard))
    if study.spam.active:
        spread_ns = study.rln.epoch_ns / study.spam.messages_per_epoch
        spam_times = [study.bootstrap_ns + round(k * spread_ns) for k in range(round(study.spam.duration_ns / spread_ns))]
        for spammer in choose_spammers(study, publishers + list(roles.service_nodes)):
            for publish_at in spam_times:
                messages.append(_message(study, size_bytes, len(messages), spammer, None, publish_at,
                                         nwaku.CONTENT_TOPIC, nwaku.SHARD, spam=True))
    return with_proofs(study, messages) if study.rln.epoch_ns else messages


def _message(study: Study, size_bytes: int, index: int, publisher: int, light_client: int | None, publish_at: int,
             topic: str, shard: int, spam: bool = False) -> Message:
    rng = random.Random(f"waku-shadow payload seed={study.seed} size={size_bytes} message={index}")
    payload = rng.randbytes(size_bytes)
    timestamp = nwaku.SIMULATION_EPOCH_NS + publish_at
    return Message(
        index=index,
        warmup=index < study.warmup_messages,
        publisher=publisher,
        size_bytes=size_bytes,
        publish_at_ns=publish_at,
        timestamp_ns=timestamp,
        payload=payload,
        msg_hash=nwaku.message_hash(shards.pubsub_topic(shard), payload, topic, timestamp),
        spam=spam,
        light_client=light_client,
        content_topic=topic,
        shard=shard,
    )


def choose_spammers(study: Study, publishers: list[int]) -> list[int]:
    rng = random.Random(f"waku-shadow spammers seed={study.seed}")
    return sorted(rng.sample([n for n in range(study.nodes) if n not in publishers], study.spam.spammers))


def with_proofs(study: Study, messages: list[Message]) -> list[Message]:
    """Each message with the stand-in proof an RLN member would attach: within one epoch (the
    message's timestamp divided by rln.epoch) a publisher's k-th message uses nullifier slot
    k mod rln.messages_per_epoch, so a spammer's messages beyond the limit repeat a nullifier.
    An honest publisher above the limit is a configuration that cannot run: its node would refuse."""
    limit = study.rln.messages_per_epoch
    sent: dict[tuple[int, int], int] = {}
    proved = []
    for message in sorted(messages, key=lambda m: (m.publish_at_ns, m.index)):
        epoch = message.timestamp_ns // study.rln.epoch_ns
        count = sent[message.publisher, epoch] = sent.get((message.publisher, epoch), 0) + 1
        if count > limit and not message.spam:
            raise ConfigError(
                f"traffic: publisher node {message.publisher} would publish {count} messages in one RLN epoch "
                f"({study.rln.epoch_ns / 1e9:g} s), above rln.messages_per_epoch = {limit}; "
                "lengthen traffic.interval, add publishers or raise the limit"
            )
        valid = 0 if message.spam and not study.spam.valid_proofs else 1
        slot = (count - 1) % limit
        nullifier = hashlib.sha256(f"seed={study.seed} member={message.publisher} epoch={epoch} slot={slot}".encode()).hexdigest()[:16]
        meta = f"{PROOF_PREFIX}{valid}:{nullifier}".encode()
        proved.append(dataclasses.replace(
            message, meta=meta,
            msg_hash=nwaku.message_hash(shards.pubsub_topic(message.shard), message.payload, message.content_topic, message.timestamp_ns, meta),
        ))
    return sorted(proved, key=lambda m: m.index)


def to_frame(messages: list[Message], hosts: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "message": [m.index for m in messages],
            "msg_hash": [m.msg_hash for m in messages],
            "warmup": [m.warmup for m in messages],
            "spam": [m.spam for m in messages],
            "rln_proof": [m.meta.decode() for m in messages],
            "publisher": [hosts[m.publisher] for m in messages],
            "light_client": ["" if m.light_client is None else hosts[m.light_client] for m in messages],
            "content_topic": [m.content_topic for m in messages],
            "shard": [m.shard for m in messages],
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


def read(run_dir: Path) -> pd.DataFrame:
    """A run's schedule.csv; one rendered before studies of spam has no spammers and no proofs, one
    rendered before content topics has them all on the first, and one before shards on shard 0."""
    frame = pd.read_csv(run_dir / layout.SCHEDULE, keep_default_na=False)
    defaults = (("spam", False), ("rln_proof", ""), ("light_client", ""), ("content_topic", nwaku.CONTENT_TOPIC),
                ("shard", nwaku.SHARD))
    return frame.assign(**{column: frame.get(column, default) for column, default in defaults})


def body_name(message: Message) -> str:
    return f"message-{message.index:04d}.json"
