"""Run inside a network namespace (`ip netns exec NS python switch_netns_traffic.py`): send frames on one
interface, collect frames on another, print them as JSON. Input on stdin:
{"tx": IFACE, "rx": IFACE, "frames": [HEX...], "expect": N, "marker": HEX, "timeout": SECONDS}."""

from __future__ import annotations

import json
import socket
import sys
import time

PACKET_OUTGOING = 4


def main() -> None:
    job = json.load(sys.stdin)
    marker = bytes.fromhex(job["marker"])
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    rx.bind((job["rx"], 0))
    rx.settimeout(0.2)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((job["tx"], 0))
    for frame in job["frames"]:
        tx.send(bytes.fromhex(frame))
    got: list[str] = []
    deadline = time.monotonic() + job["timeout"]
    while len(got) < job["expect"] and time.monotonic() < deadline:
        try:
            data, addr = rx.recvfrom(65536)
        except TimeoutError:
            continue
        if addr[2] != PACKET_OUTGOING and marker in data:
            got.append(data.hex())
    print(json.dumps(got))


if __name__ == "__main__":
    main()
