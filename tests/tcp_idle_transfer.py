"""Server and client of the slow-start-after-idle test (tests/test_shadow_tcp.py), run by Shadow.

  server PORT BURST SIZE
      accepts one connection, reads BURST bytes, answers one byte, then reads SIZE bytes and
      prints {"received_at": <time it had them all>}.
  client HOST PORT BURST SIZE IDLE
      sends BURST bytes (they open the congestion window), waits for the answer (so everything
      it sent is acknowledged), sleeps IDLE (seconds, or "<x>rto": x times the connection's
      retransmission timeout), sends SIZE bytes and prints {"sent_at": ...} with its TCP_INFO
      from before the sleep (mss; cwnd in segments; rto in seconds, 0 where Shadow leaves it out).

Every time is Shadow's simulated clock, which both hosts share.
"""

import json
import socket
import struct
import sys
import time

TCP_INFO_LENGTH = 104
# struct tcp_info: eight one-byte fields, then tcpi_rto, tcpi_ato, tcpi_snd_mss, ... as u32
TCP_INFO = struct.Struct("8B19I")
RTO, SND_MSS, SND_CWND = 0, 2, 18


def read_exactly(conn: socket.socket, count: int) -> None:
    while count > 0:
        chunk = conn.recv(min(count, 1 << 16))
        if not chunk:
            raise SystemExit(f"the connection closed with {count} bytes still to read")
        count -= len(chunk)


def serve(port: int, burst: int, size: int) -> None:
    with socket.create_server(("0.0.0.0", port)) as listener:
        conn, _ = listener.accept()
        with conn:
            read_exactly(conn, burst)
            conn.sendall(b"!")
            read_exactly(conn, size)
            print(json.dumps({"received_at": time.time()}), flush=True)


def send(host: str, port: int, burst: int, size: int, idle: str) -> None:
    with socket.create_connection((host, port)) as conn:
        conn.sendall(bytes(burst))
        read_exactly(conn, 1)
        info = TCP_INFO.unpack(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LENGTH)[: TCP_INFO.size])
        fields = info[8:]
        rto = fields[RTO] / 1e6
        time.sleep(float(idle[:-3]) * rto if idle.endswith("rto") else float(idle))
        sent_at = time.time()
        conn.sendall(bytes(size))
        print(json.dumps({"sent_at": sent_at, "mss": fields[SND_MSS], "cwnd": fields[SND_CWND], "rto": rto}), flush=True)
        # close only after the server has read everything: it closes first
        conn.recv(1)


if __name__ == "__main__":
    role, args = sys.argv[1], sys.argv[2:]
    if role == "server":
        serve(int(args[0]), int(args[1]), int(args[2]))
    else:
        send(args[0], int(args[1]), int(args[2]), int(args[3]), args[4])
