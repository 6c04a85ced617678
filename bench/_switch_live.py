"""The live half of `bench/switch_pps.py`: the embedded switch forwarding between two veth pairs in a network
namespace this module creates and removes, once per port I/O path (`socket`: one system call per packet, the path
before issue 17; `ring`: mmap rx ring + sendmmsg), so both rates and their ratio come from one run.

The switch runs in this process (its sockets are opened inside the namespace through `setns`, so `process_time`
is the switch's CPU); the traffic comes from a second process in the namespace that keeps a fixed number of frames
in flight (closed loop): it measures the rate at which every frame gets through, not how many a blast loses.
`paired` alternates file mode and one long-lived live switch in chunks, with any number of ports (one veth pair
each; aggregate_wide sends out of five), counting what leaves on every output port's far end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
IN_FLIGHT = 480  # frames the generator keeps in flight: below the switch's ring (516 slots), so none is dropped
BURST = 32  # frames the generator sends at once once the window has that much room
POLL = 0.001  # seconds the generator sleeps between looks for returned frames (480 in flight last ~15 ms)
#: How the generator learns that frames came back: "counter" reads the far veth's rx_packets (the switch's output
#: is not copied anywhere, as a NIC's wire would take it), "ring" copies each into a packet ring (a host's view).
SINKS = ("counter", "ring")

_GENERATOR = r"""
import json, os, socket, sys
sys.path.insert(0, sys.argv[4])
from bench._closed_loop import closed_loop
from pktio.mmsg import BurstSender
from pktio.ring import RxRing
tx_if, rx_if, n, window, burst = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[5]), int(sys.argv[6])
poll, sink = float(sys.argv[7]), sys.argv[8]
frames = [bytes.fromhex(h) for h in sys.stdin.read().split()]
if sink == "ring":  # every returned frame copied into this process's packet ring, as a host's agent receives
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    rx.bind((rx_if, 0))
    ring = RxRing(rx)
    total = [0]
    def returned():
        total[0] += ring.discard(4096)
        return total[0]
else:  # "counter": the far interface's receive counter; no socket, so no copy of the frames the switch sends
    fd = os.open(f"/sys/class/net/{rx_if}/statistics/rx_packets", os.O_RDONLY)
    base = int(os.pread(fd, 32, 0))
    returned = lambda: int(os.pread(fd, 32, 0)) - base
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind((tx_if, 0))
sender = BurstSender(tx)
result = closed_loop(sender.send, frames, n, returned, window=window, burst=burst, poll=poll)
print(json.dumps({**result, "send_errors": sender.errors}))
"""


#: The generator as a server for `paired`: the frames on its first stdin line, then one count per line; for each it
#: runs `bench._closed_loop.closed_loop` until that many frames came back (summed over the far ends of every output
#: port, read from their rx counters) and answers with one JSON line. It goes on round the frames where the last chunk
#: stopped, so a stateful program (an aggregation's slots) sees one continuous sequence, as file mode does.
_SERVER = r"""
import json, os, socket, sys
sys.path.insert(0, sys.argv[3])
from bench._closed_loop import closed_loop
from pktio.mmsg import BurstSender
tx_if, rx_ifs, window, burst, poll = sys.argv[1], sys.argv[2], int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
frames = [bytes.fromhex(h) for h in sys.stdin.readline().split()]
fds = [os.open(f"/sys/class/net/{name}/statistics/rx_packets", os.O_RDONLY) for name in rx_ifs.split(",")]
def count():
    return sum(int(os.pread(fd, 32, 0)) for fd in fds)
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind((tx_if, 0))
sender = BurstSender(tx)
offset = 0
for line in sys.stdin:
    base = count()
    result = closed_loop(sender.send, frames, int(line), lambda: count() - base, window=window, burst=burst,
                         poll=poll, offset=offset)
    offset = (offset + result["sent"]) % len(frames)
    print(json.dumps(result), flush=True)
"""


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@contextmanager
def veth_namespace(name: str, pairs: tuple[tuple[str, str], ...]) -> Iterator[str]:
    """A network namespace with the given veth pairs (MTU 9000, IPv6 off so nothing else is sent), removed after."""
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    _ip("netns", "add", name)
    try:
        for key in ("all", "default"):
            _ip("netns", "exec", name, "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1")
        for a, b in pairs:
            _ip("-n", name, "link", "add", a, "type", "veth", "peer", "name", b)
            for end in (a, b):
                _ip("-n", name, "link", "set", end, "mtu", "9000", "up")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def forward(program: tuple[Any, bytes], frames: list[bytes], n: int, port_io: str, sink: str = "counter"
            ) -> dict[str, Any]:
    """Packets/s of the live switch forwarding `frames` (all routed from port 1 to port 2) between veths."""
    from p4switch.switch.core import Switch
    from pktio.netns import entered

    pairs = (("p4b-a0", "p4b-a1"), ("p4b-b0", "p4b-b1"))
    with veth_namespace(f"p4b-{os.getpid()}", pairs) as ns:
        sw = Switch(queue_depth=1024, port_io=port_io)
        try:
            sw.install_pipeline(*program)
            with entered(ns):
                sw.add_interface(1, pairs[0][1])
                sw.add_interface(2, pairs[1][1])
            io = sw.port_io_summary()
            sw.start()
            cpu_start, times_start = time.process_time(), os.times()
            out = subprocess.run(
                ["ip", "netns", "exec", ns, sys.executable, "-c", _GENERATOR, pairs[0][0], pairs[1][0], str(n),
                 str(REPO), str(IN_FLIGHT), str(BURST), str(POLL), sink],
                input=" ".join(f.hex() for f in frames), capture_output=True, text=True, timeout=600, check=True,
            ).stdout
            cpu, times_end = time.process_time() - cpu_start, os.times()
            traffic = json.loads(out)
            stats = sw.stats()
        finally:
            sw.stop()
    received, span = traffic["received"], traffic["span"]
    counters = {k: v for k, v in stats.items() if isinstance(v, int) and v}
    return {
        "port_io": port_io, "io": io, "sink": sink, "offered": traffic["sent"], "received": received,
        "all_arrived": received == traffic["sent"] == n,
        "pps": round((received - 1) / span, 1) if span > 0 else 0.0,
        "cpu_pps": round(counters.get("transmitted", 0) / cpu, 1) if cpu > 0 else None,
        # CPU time of the switch per forwarded packet: independent of what else the machine is running
        "cpu_us_per_packet": round(cpu / max(counters.get("transmitted", 0), 1) * 1e6, 2),
        # of which in the kernel: on veth the sender's system call also runs the peer's receive path, so the
        # switch pays for delivering its output into the generator's ring, and the generator for the switch's input
        "sys_us_per_packet": round((times_end.system - times_start.system) / max(received, 1) * 1e6, 2),
        # the generator's CPU in its send/receive loop: on 2 cores it competes with the switch for time
        "generator_cpu_us_per_packet": round(traffic["cpu"] / max(received, 1) * 1e6, 2),
        "switch_stats": counters, "ports": stats["ports"],
    }


def veth_pairs(ports: tuple[int, ...]) -> tuple[tuple[str, str], ...]:
    """One veth pair per switch port: (the traffic's end, the switch's end), short enough for IFNAMSIZ."""
    return tuple((f"p4b-{chr(97 + i)}0", f"p4b-{chr(97 + i)}1") for i in range(len(ports)))


def paired(program: tuple[Any, bytes], frames: list[bytes], file_chunk: Callable[[int], float], chunk: int,
           chunks: int, *, in_port: int = 1, out_ports: tuple[int, ...] = (2,)) -> dict[str, Any]:
    """File mode and the live switch in alternated chunks of `chunk` packets, `chunks` times each, with one live
    switch and one generator process kept running (no set-up inside a measurement): each file-mode chunk
    (`file_chunk(n)` returns its CPU seconds) sits next to a live one (this process's CPU while the generator
    gets that many frames through), so both see the same load within a fraction of a second. The generator sends
    into `in_port` and counts what leaves any of `out_ports` (each port a veth pair; every frame must leave
    exactly once). CPU per packet of each side (live: also its kernel share) and the median of the chunks'
    live/file CPU-time ratios."""
    from statistics import median

    from p4switch.switch.core import Switch
    from pktio.netns import entered

    ports = tuple(sorted({in_port, *out_ports}))
    pairs = veth_pairs(ports)
    end = dict(zip(ports, pairs, strict=True))
    file_cpu: list[float] = []
    live_cpu: list[float] = []
    live_sys = generator_cpu = 0.0
    with veth_namespace(f"p4b-{os.getpid()}", pairs) as ns:
        sw = Switch(queue_depth=1024, port_io="ring")
        gen: subprocess.Popen[str] | None = None
        try:
            sw.install_pipeline(*program)
            with entered(ns):
                for port in ports:
                    sw.add_interface(port, end[port][1])
            sw.start()
            gen = subprocess.Popen(
                ["ip", "netns", "exec", ns, sys.executable, "-c", _SERVER, end[in_port][0],
                 ",".join(end[p][0] for p in out_ports), str(REPO), str(IN_FLIGHT), str(BURST), str(POLL)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert gen.stdin is not None and gen.stdout is not None
            gen.stdin.write(" ".join(f.hex() for f in frames) + "\n")

            def live(n: int) -> tuple[float, float, dict[str, Any]]:
                assert gen is not None and gen.stdin is not None and gen.stdout is not None
                cpu, system = time.process_time(), _system_cpu()
                gen.stdin.write(f"{n}\n")
                gen.stdin.flush()
                reply = json.loads(gen.stdout.readline())
                return time.process_time() - cpu, _system_cpu() - system, reply

            live(min(chunk, 2000))  # warm-up: first-use paths, the ring's pages
            file_chunk(min(chunk, 2000))
            for _ in range(chunks):
                file_cpu.append(file_chunk(chunk))
                cpu, system, reply = live(chunk)
                if reply["received"] != chunk:
                    return {"error": "frames lost on the live path", "chunk": reply}
                live_cpu.append(cpu)
                live_sys += system
                generator_cpu += reply["cpu"]
            ports_tx = {port: p["tx"] for port, p in sw.stats()["ports"].items()}
        finally:
            if gen is not None:
                if gen.stdin is not None:
                    gen.stdin.close()
                gen.wait(timeout=30)
            sw.stop()
    total = chunk * chunks
    return {
        "chunk": chunk, "chunks": chunks,
        "file_cpu_us_per_packet": round(sum(file_cpu) / total * 1e6, 2),
        "live_cpu_us_per_packet": round(sum(live_cpu) / total * 1e6, 2),
        "live_sys_us_per_packet": round(live_sys / total * 1e6, 2),
        "generator_cpu_us_per_packet": round(generator_cpu / total * 1e6, 2),
        "cpu_ratio": round(median(f / x for f, x in zip(file_cpu, live_cpu, strict=True)), 3),
        "ports_tx": ports_tx,  # frames each port sent, the warm-up chunk included
    }


def _system_cpu() -> float:
    """This process's kernel CPU seconds (`getrusage`: microseconds, where `os.times` counts 10 ms ticks)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_stime
