"""What one run is: its study and size, identities, topology, publishers, schedule, locations, bandwidth classes
and churn."""

from __future__ import annotations

from dataclasses import dataclass

from waku_shadow.configuration.study import Study
from waku_shadow.render import churn_plan, light_clients, locations, schedule, shards, topology
from waku_shadow.render import identities as ids


@dataclass(frozen=True)
class RunPlan:
    study: Study
    size_bytes: int
    identities: list[ids.Identity]
    topology: topology.Topology
    messages: list[schedule.Message]
    node_locations: list[str] | None  # per node, when the study spreads nodes over locations
    node_classes: list[str] | None  # per node, its bandwidth class when the study has them
    outages: list[churn_plan.Outage]
    roles: light_clients.Roles
    shards: shards.ShardPlan

    @property
    def publishers(self) -> set[int]:
        """The nodes whose messages enter relay: relay publishers and the light publishers' service nodes."""
        return {m.publisher for m in self.messages}

    @property
    def bootstrap_nodes(self) -> list[ids.Identity]:
        """The nodes every other node starts its discv5 search from (none on a static graph)."""
        return self.identities[:self.study.discovery.bootstrap_nodes] if self.study.discovery else []

    @property
    def rest_hosts(self) -> set[int]:
        """The relay nodes whose REST API a run calls: the relay publishers (every light client has REST on)."""
        return {m.publisher for m in self.messages if m.light_client is None}


def plan(study: Study, size_bytes: int) -> RunPlan:
    roles = light_clients.choose(study)
    shard_plan = shards.choose(study, topology.choose_publishers(study.topology, study.nodes, study.publishers, study.seed))
    messages = schedule.build(study, size_bytes, roles, shard_plan)
    graph = (topology.by_shard(shard_plan.served, study.peers_per_node, study.seed)
             if study.shards.own_lists and study.discovery is None
             else topology.build(study.topology, study.nodes, study.peers_per_node, study.seed))
    return RunPlan(
        study=study,
        size_bytes=size_bytes,
        identities=ids.generate(study.nodes, study.seed, study.light_clients.clients),
        topology=graph,
        messages=messages,
        node_locations=None if study.locations is None else locations.assign(
            study.nodes, list(study.locations.weights), study.locations.assignment, study.seed),
        node_classes=locations.assign_classes(study.nodes, study.bandwidth_classes, study.seed) if study.bandwidth_classes else None,
        outages=churn_plan.outages(study, {m.publisher for m in messages} | set(roles.service_nodes))
        + churn_plan.client_outages(study, [c for c in range(study.nodes, study.hosts) if c not in roles.light_publishers]),
        roles=roles,
        shards=shard_plan,
    )

