"""Server and client of the half-closed writer test (tests/test_shadow_tcp.py), run by Shadow.

  server PORT
      accepts one connection, never reads from it, sends its FIN (shutdown for writing) after
      1 s, prints {"fin_sent_at": ...} and exits after 10 s.
  client HOST PORT
      connects, writes without blocking until its send buffer is full, waits until the server's
      FIN has arrived, fills the send buffer again (the server never reads), then waits for room
      to write, five times for at most 1 s each with EPOLLRDHUP in the interest set, as chronos
      registers every socket, then five times without it, as nwaku patch 0023 registers a socket
      that only waits to write. It prints what each wait returned and how much simulated time it
      took.

Every time is Shadow's simulated clock.
"""

import json
import select
import socket
import sys
import time

FIN_AFTER_S = 1.0
WAIT_S = 1.0
WAITS = 5


def serve(port: int) -> None:
    with socket.create_server(("0.0.0.0", port)) as listener:
        conn, _ = listener.accept()
        time.sleep(FIN_AFTER_S)
        conn.shutdown(socket.SHUT_WR)
        print(json.dumps({"fin_sent_at": time.time()}), flush=True)
        time.sleep(10)
        conn.close()


def fill(conn: socket.socket) -> int:
    """Write until the send buffer is full; the bytes written."""
    written = 0
    try:
        while True:
            written += conn.send(bytes(1 << 16))
    except BlockingIOError:
        return written


def waits(conn: socket.socket, interest: int) -> list[dict]:
    """WAITS waits for room to write; each one's events and simulated duration."""
    poller = select.epoll()
    poller.register(conn.fileno(), interest)
    found = []
    for _ in range(WAITS):
        started = time.time()
        events = poller.poll(WAIT_S)
        found.append({"events": [mask for _, mask in events], "took": time.time() - started})
    poller.close()
    return found


def write(host: str, port: int) -> None:
    with socket.create_connection((host, port)) as conn:
        conn.setblocking(False)
        written = fill(conn)
        time.sleep(FIN_AFTER_S + 1.0)
        # the server's receive buffer took some of it meanwhile: fill the send buffer again
        written += fill(conn)
        result = {
            "written": written,
            "with_rdhup": waits(conn, select.EPOLLOUT | select.EPOLLRDHUP),
            "without_rdhup": waits(conn, select.EPOLLOUT),
            "EPOLLRDHUP": select.EPOLLRDHUP,
        }
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    role, *args = sys.argv[1:]
    if role == "server":
        serve(int(args[0]))
    else:
        write(args[0], int(args[1]))
