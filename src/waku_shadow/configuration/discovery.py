"""network.topology: discv5 and network.discovery: a network whose nodes find their peers themselves."""

from __future__ import annotations

from waku_shadow.configuration.study import Discovery
from waku_shadow.errors import refused

# the patches a discv5 network needs: the lines its graph is read from (0041), and nodes that count
# as online without a DNS server to ask (0042)
DISCOVERY_PATCHES = ("0041", "0042")


def parse(cfg: dict, built: set[str] | None) -> Discovery | None:
    """The study's discovery, None for a static graph; refused by key where the build or a setting
    beside it cannot run it."""
    net = cfg["network"]
    if net["topology"] != "discv5":
        return None
    found = Discovery(**net["discovery"])
    tag = cfg["stack"]["nwaku"]["tag"]
    missing = [number for number in DISCOVERY_PATCHES if built is not None and number not in built]
    if missing:
        raise refused("network.topology", f"discv5 needs nwaku patches {' and '.join(DISCOVERY_PATCHES)}; "
                      f"nwaku-patches/{tag}/ has no {', '.join(missing)}")
    if found.bootstrap_nodes >= net["nodes"]:
        raise refused("network.discovery.bootstrap_nodes",
                      f"{found.bootstrap_nodes} bootstrap nodes leave no other node of network.nodes ({net['nodes']})")
    if cfg["light_clients"]["clients"]:
        raise refused("network.topology", "light clients in a discv5 network are not built yet")
    if cfg["churn"]["leaves_per_minute"]:
        raise refused("network.topology", "churn in a discv5 network is not built yet")
    return found
