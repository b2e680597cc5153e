"""waku-shadow: latency studies of real nwaku nodes inside the Shadow network simulator."""
