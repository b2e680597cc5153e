"""The graph Shadow routes over: one network node per place and bandwidth class that holds hosts.

A place is a location of network.locations, or the one place every node shares; a class is one of
network.bandwidth_classes, or the study's one bandwidth. Shadow takes a host's bandwidth from its
network node's attributes, so a class is a node of its own beside the others of its place.
"""

from __future__ import annotations

from dataclasses import dataclass

from waku_shadow.configuration.units import shadow_bandwidth, shadow_time
from waku_shadow.render.plan import RunPlan


@dataclass(frozen=True)
class GraphNode:
    place: str | None  # None: the one place of a study without locations
    bandwidth_class: str | None  # None: the study's one bandwidth
    up_bps: int
    down_bps: int

    @property
    def label(self) -> str | None:
        named = [part for part in (self.place, self.bandwidth_class) if part is not None]
        return " ".join(named) or None


def graph_nodes(run: RunPlan) -> list[GraphNode]:
    """The network nodes in id order: every place that holds a host (in the order of the study's names)
    times every class that holds one (in theirs)."""
    study = run.study
    places = [None] if run.node_locations is None else [
        name for name, _ in study.locations.weights if name in set(run.node_locations)]
    if run.node_classes is None:
        classes = [(None, study.bandwidth_up_bps, study.bandwidth_down_bps)]
    else:
        held = set(run.node_classes)
        classes = [(c.name, c.up_bps, c.down_bps) for c in study.bandwidth_classes if c.name in held]
    return [GraphNode(place, name, up, down) for place in places for name, up, down in classes]


def node_ids(run: RunPlan) -> list[int]:
    """Each host's network node: its place's and its class's."""
    ids = {(node.place, node.bandwidth_class): i for i, node in enumerate(graph_nodes(run))}
    return [ids[(run.node_locations and run.node_locations[i], run.node_classes and run.node_classes[i])]
            for i in range(len(run.identities))]


def routed_directly(run: RunPlan) -> bool:
    """Whether the graph has places or classes, so Shadow is told to route every pair over its own edge."""
    return run.node_locations is not None or run.node_classes is not None


def gml(run: RunPlan) -> str:
    """The complete graph with self-loops: every pair of network nodes has its own edge, its latency the
    places' (network.locations' matrix, or network.latency) and the study's packet loss.

    Shadow's GML parser wants one attribute per line.
    """
    study = run.study
    nodes = graph_nodes(run)

    def latency_ns(a: GraphNode, b: GraphNode) -> int:
        return study.latency_ns if study.locations is None else study.locations.one_way_ns(a.place, b.place)

    lines = ["graph [", "  directed 0"]
    for index, node in enumerate(nodes):
        lines += ["  node [", f"    id {index}"]
        if node.label is not None:
            lines.append(f'    label "{node.label}"')
        lines += [
            f'    host_bandwidth_down "{shadow_bandwidth(node.down_bps)}"',
            f'    host_bandwidth_up "{shadow_bandwidth(node.up_bps)}"',
            "  ]",
        ]
    for i, a in enumerate(nodes):
        for j in range(i, len(nodes)):
            lines += [
                "  edge [",
                f"    source {i}",
                f"    target {j}",
                f'    latency "{shadow_time(latency_ns(a, nodes[j]))}"',
                f"    packet_loss {study.packet_loss}",
                "  ]",
            ]
    return "\n".join(lines + ["]", ""])
