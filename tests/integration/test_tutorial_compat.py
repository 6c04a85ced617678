"""A P4-tutorials-style run on the embedded target, with BMv2's binary names swapped for p4ina's console scripts.

As the tutorials do it: the program is compiled with the Makefile's flags (`P4C --p4v 16 --p4runtime-files
build/X.p4.p4info.txtpb -o build/X.json X.p4`, P4C=p4ina-p4c-bm2-ss); a Mininet topology is built from a
tutorial-format topology.json (hosts with ip/mac/commands, links `sN-pM`); each switch is started the way
utils/p4runtime_switch.py starts BMV2_SWITCH_EXE (here p4ina-simple-switch-grpc): `-i PORT@INTF ... --pcap DIR
--nanolog ipc://... --device-id N build/X.json --log-console --thrift-port N -- --grpc-server-addr 0.0.0.0:PORT`,
its output in a log file; each switch is programmed by a p4runtime_lib-style client (election id 1, the device
config in a P4DeviceConfig, writes, half-close); then hosts ping across one and two switches.

Node names get a per-run prefix so the veths cannot clash with other runs on this machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.root, pytest.mark.integration]

TUTORIAL = Path(__file__).resolve().parent / "tutorial"
sys.path.insert(0, str(TUTORIAL))

BIN = Path(sys.executable).parent
P4C = BIN / "p4ina-p4c-bm2-ss"
SWITCH_EXE = BIN / "p4ina-simple-switch-grpc"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(address: str, pid: int, log: Path, timeout: float = 90) -> None:
    import grpc
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            raise AssertionError(f"switch exited; its log:\n{log.read_text() if log.exists() else ''}")
        with grpc.insecure_channel(address) as ch:
            try:
                p4runtime_pb2_grpc.P4RuntimeStub(ch).Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=2)
                return
            except grpc.RpcError:
                time.sleep(0.3)
    raise AssertionError(f"switch did not listen on {address}; its log:\n{log.read_text() if log.exists() else ''}")


def switch_class() -> Any:
    from mininet.node import Switch

    class TutorialStyleSwitch(Switch):
        """Starts the switch binary with the argv utils/p4runtime_switch.py builds, in the root namespace."""

        def __init__(self, name: str, *, sw_path: str, json_path: str, grpc_port: int, thrift_port: int,
                     device_id: int, pcap_dir: str, log_file: str, **kwargs: Any) -> None:
            Switch.__init__(self, name, **kwargs)
            self.sw_path, self.json_path = sw_path, json_path
            self.grpc_port, self.thrift_port, self.device_id = grpc_port, thrift_port, device_id
            self.pcap_dir, self.log_file = pcap_dir, log_file
            self.switch_pid: int | None = None
            self.command = ""

        def start(self, controllers: list[Any]) -> None:
            args = [self.sw_path]
            for port, intf in list(self.intfs.items()):
                if not intf.IP():
                    args += ["-i", f"{port}@{intf.name}"]
            args.append(f"--pcap {self.pcap_dir}")
            args += ["--nanolog", f"ipc:///tmp/bm-{self.device_id}-log.ipc"]
            args += ["--device-id", str(self.device_id), self.json_path, "--log-console"]
            args.append(f"--thrift-port {self.thrift_port}")
            args.append(f"-- --grpc-server-addr 0.0.0.0:{self.grpc_port}")
            self.command = " ".join(args)
            out = self.cmd(f"{self.command} > {self.log_file} 2>&1 & echo $!")
            self.switch_pid = int(out.strip().split()[-1])
            wait_listening(f"127.0.0.1:{self.grpc_port}", self.switch_pid, Path(self.log_file))

        def stop(self, deleteIntfs: bool = True) -> None:
            if self.switch_pid is not None and Path(f"/proc/{self.switch_pid}").exists():
                os.kill(self.switch_pid, signal.SIGTERM)
                for _ in range(100):
                    if not Path(f"/proc/{self.switch_pid}").exists():
                        break
                    time.sleep(0.1)
                else:
                    os.kill(self.switch_pid, signal.SIGKILL)
            self.switch_pid = None
            Switch.stop(self, deleteIntfs)

    return TutorialStyleSwitch


def build_topology(topo_json: dict[str, Any], prefix: str, switch_opts: dict[str, dict[str, Any]]) -> Any:
    """The tutorials' ExerciseTopo reading: host links `hN - sN-pM`, switch links `sA-pM - sB-pN`."""
    from mininet.topo import Topo

    topo = Topo()
    for sw, opts in switch_opts.items():
        topo.addSwitch(prefix + sw, **opts)
    for name, host in topo_json["hosts"].items():
        topo.addHost(prefix + name, ip=host["ip"], mac=host["mac"])
    for a, b in topo_json["links"]:
        if a.startswith("h"):
            sw, port = b.split("-p")
            topo.addLink(prefix + a, prefix + sw, port2=int(port))
        else:
            (sw1, p1), (sw2, p2) = a.split("-p"), b.split("-p")
            topo.addLink(prefix + sw1, prefix + sw2, port1=int(p1), port2=int(p2))
    return topo


@pytest.fixture
def build(tmp_path: Path) -> Path:
    """`make build` with P4C=p4ina-p4c-bm2-ss: `$(P4C) --p4v 16 $(P4C_ARGS) -o $(BUILD_DIR)/$@ $<`."""
    assert P4C.exists() and SWITCH_EXE.exists(), "console scripts missing: run scripts/setup.sh"
    shutil.copy(TUTORIAL / "ipv4_fwd.p4", tmp_path / "ipv4_fwd.p4")
    (tmp_path / "build").mkdir()
    result = subprocess.run([str(P4C), "--p4v", "16", "--p4runtime-files", "build/ipv4_fwd.p4.p4info.txtpb",
                             "-o", "build/ipv4_fwd.json", "ipv4_fwd.p4"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return tmp_path / "build"


@pytest.fixture
def network(tmp_path: Path, build: Path) -> Iterator[tuple[Any, dict[str, Any], str]]:
    from mininet.net import Mininet

    topo_json = json.loads((TUTORIAL / "topology.json").read_text())
    prefix = f"t{os.getpid() % 10000}"
    (tmp_path / "logs").mkdir()
    (tmp_path / "pcaps").mkdir()
    switch_opts = {}
    for device_id, sw in enumerate(topo_json["switches"]):  # p4runtime_switch.py numbers devices 0, 1, ...
        switch_opts[sw] = {"cls": switch_class(), "sw_path": str(SWITCH_EXE), "json_path": str(build / "ipv4_fwd.json"),
                           "grpc_port": free_port(), "thrift_port": 9090 + device_id, "device_id": device_id,
                           "pcap_dir": str(tmp_path / "pcaps"), "log_file": str(tmp_path / "logs" / f"{sw}.log")}
    net = Mininet(topo=build_topology(topo_json, prefix, switch_opts), controller=None, autoSetMacs=False,
                  autoStaticArp=False)
    try:
        net.start()
        for name, host in topo_json["hosts"].items():
            node = net.get(prefix + name)
            node.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
            for command in host["commands"]:
                out = node.cmd(command.format(intf=node.defaultIntf().name))
                assert "rror" not in out, f"{name}: {command}: {out}"
        yield net, topo_json, prefix
    finally:
        net.stop()


def program_switch(address: str, device_id: int, build: Path, routes: list[list[Any]]) -> None:
    """What run_exercise.py's program_switch_p4runtime does through p4runtime_lib, with the project's client."""
    from google.protobuf import text_format
    from google.rpc import code_pb2
    from p4.config.v1 import p4info_pb2
    from p4.v1 import p4runtime_pb2
    from tutorial_client import TutorialConnection

    p4info = text_format.Parse((build / "ipv4_fwd.p4.p4info.txtpb").read_text(), p4info_pb2.P4Info())
    table = next(t for t in p4info.tables if t.preamble.name == "FwdIngress.routes")
    action = next(a for a in p4info.actions if a.preamble.name == "FwdIngress.to_next_hop")
    params = {p.name: p.id for p in action.params}
    conn = TutorialConnection(address, device_id=device_id)
    try:
        assert conn.master_arbitration_update().status.code == code_pb2.OK
        conn.set_forwarding_pipeline_config(p4info, (build / "ipv4_fwd.json").read_bytes())
        for dst, prefix_len, mac, port in routes:
            entry = p4runtime_pb2.TableEntry(table_id=table.preamble.id)
            match = entry.match.add(field_id=table.match_fields[0].id)
            match.lpm.value = bytes(int(x) for x in dst.split("."))
            match.lpm.prefix_len = prefix_len
            entry.action.action.action_id = action.preamble.id
            entry.action.action.params.add(param_id=params["next_mac"], value=bytes.fromhex(mac.replace(":", "")))
            entry.action.action.params.add(param_id=params["out_port"], value=int(port).to_bytes(2, "big"))
            conn.write_table_entry(entry)
        assert len(conn.read_table_entries(table.preamble.id)) == len(routes)
    finally:
        conn.shutdown()


def ping(host: Any, dst: str) -> str:
    return str(host.cmd(f"ping -c 3 -i 0.3 -W 3 {dst}"))


def test_tutorial_style_run_pings_across_two_switches(network: tuple[Any, dict[str, Any], str], build: Path,
                                                      tmp_path: Path) -> None:
    net, topo_json, prefix = network
    for name, spec in topo_json["switches"].items():
        sw = net.get(prefix + name)
        assert f"-- --grpc-server-addr 0.0.0.0:{sw.grpc_port}" in sw.command and "--thrift-port" in sw.command
        program_switch(f"127.0.0.1:{sw.grpc_port}", sw.device_id, build, spec["runtime"])

    h1, h2, h3 = (net.get(prefix + h) for h in ("h1", "h2", "h3"))
    one_hop = ping(h1, "10.0.2.2")
    assert " 0% packet loss" in one_hop, one_hop
    assert "ttl=63" in one_hop, one_hop  # the reply crossed one switch: 64 - 1
    two_hops = ping(h1, "10.0.3.3")
    assert " 0% packet loss" in two_hops, two_hops
    assert "ttl=62" in two_hops, two_hops  # two switches, each decrements
    back = ping(h3, "10.0.2.2")
    assert " 0% packet loss" in back, back
    neighbour = ping(h2, "10.0.1.1")
    assert " 0% packet loss" in neighbour and "ttl=63" in neighbour, neighbour
    unrouted = ping(h1, "10.0.9.9")
    assert "100% packet loss" in unrouted, unrouted  # a miss drops

    s1 = net.get(prefix + "s1")
    log = Path(s1.log_file).read_text()
    assert "--thrift-port" in log and "ignored" in log  # the warning, not an error
    pcaps = sorted(p.name for p in (tmp_path / "pcaps").iterdir())
    assert f"{prefix}s1-eth1_in.pcap" in pcaps and f"{prefix}s1-eth1_out.pcap" in pcaps
