"""The live switch on AF_PACKET ports: `p4ina switch` inside a network namespace this test creates, frames in on
one veth and out of another, a rate-limited egress queue visible in the queue metadata, clean SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from switch_cli_runner import switch_command

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "switch"))

from switch_ctlprog import OBS_SIZE, ctl, device_config, observe, p4info_text

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.root


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=30)


@pytest.fixture
def netns() -> Iterator[str]:
    name = f"p4ina-swt{os.getpid()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    sh("ip", "netns", "add", name)
    try:
        for key in ("all", "default"):
            sh("ip", "netns", "exec", name, "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1")
        for a, b in (("va0", "va1"), ("vb0", "vb1")):
            sh("ip", "-n", name, "link", "add", a, "type", "veth", "peer", "name", b)
            for end in (a, b):
                sh("ip", "-n", name, "link", "set", end, "mtu", "9000", "up")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def exchange(ns: str, frames: list[bytes], expect: int, marker: bytes) -> list[bytes]:
    job = {"tx": "va0", "rx": "vb0", "frames": [f.hex() for f in frames], "expect": expect,
           "marker": marker.hex(), "timeout": 20}
    out = subprocess.run(
        ["ip", "netns", "exec", ns, sys.executable, str(HERE / "switch_netns_traffic.py")],
        input=json.dumps(job), capture_output=True, text=True, timeout=60, check=True,
    ).stdout
    return [bytes.fromhex(h) for h in json.loads(out)]


def test_frames_cross_the_switch_and_queue_metadata_shows_the_rate_limit(netns: str, tmp_path: Path) -> None:
    (tmp_path / "prog.json").write_bytes(device_config())
    (tmp_path / "prog.p4info.txtpb").write_text(p4info_text())
    cmd = ["ip", "netns", "exec", netns, *switch_command(
        ["prog.json", "-i", "1@va1", "-i", "2@vb1", "--queue-rate", "2=200"])]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "running" in line, line + (proc.stderr.read() if proc.poll() is not None else "")
        marker = b"p4ina-live-test"
        frames = [ctl(port=2, payload=marker + bytes([i]) + bytes(40)) for i in range(40)]
        got = exchange(netns, frames, expect=40, marker=marker)
        assert [f[8 + OBS_SIZE + len(marker)] for f in got] == list(range(40))  # all arrived, in order
        obs = [observe(f) for f in got]
        assert all(o["ingress_port"] == 1 and o["egress_port"] == 2 for o in obs)
        # 40 frames arrive far faster than 200 packets/s drain: the queue must have built up
        assert max(o["enq_qdepth"] for o in obs) >= 5
        jumbo = ctl(port=2, payload=marker + bytes(range(256)) * 34)  # 8.7 kB: a jumbo frame, intact
        (got_jumbo,) = exchange(netns, [jumbo], expect=1, marker=marker)
        assert got_jumbo[8 + OBS_SIZE:] == jumbo[8:]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
