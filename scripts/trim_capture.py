"""Keep only a capture's connection openings and closings (its SYN, FIN and RST packets), unchanged.

What `waku-shadow closes` reads, small enough to commit as a test fixture:
    python scripts/trim_capture.py RUN/logs/node0017/eth0.pcap.gz tests/data/.../eth0.pcap.gz
"""

import gzip
import sys

from waku_shadow.parse import pcap


def trim(source: str, destination: str) -> None:
    with gzip.open(source, "rb") as handle:
        header = handle.read(pcap.GLOBAL_HEADER.size)
    with gzip.open(destination, "wb") as out:
        out.write(header)
        for time_ns, packet, original in pcap.records(source):
            tcp = pcap.tcp_segment(packet)
            if tcp is not None and tcp[pcap.TCP_FLAGS_OFFSET] & pcap.TCP_SYN_FIN_RST:
                seconds, nanoseconds = divmod(time_ns, 1_000_000_000)
                out.write(pcap.RECORD_HEADER.pack(seconds, nanoseconds // 1000, len(packet), original) + packet)


if __name__ == "__main__":
    trim(*sys.argv[1:])
