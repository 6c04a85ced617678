"""Test harness for p4src/p4ina.p4 on the embedded target: switches, links, simulated workers, and a job installer.

The fabric is event-driven and deterministic: every frame a switch or worker emits waits in one in-flight list, and
the test decides which frame moves next (FIFO, or a seeded random pick), which are lost and which are duplicated.
Workers retransmit everything outstanding when the network falls silent (the test's stand-in for a timeout), as
host agents do. Entries go through the P4Runtime entity codec (`p4switch.runtime.entries`), named as in
docs/p4-program.md, so the names and widths documented there are what the tests exercise.
"""

from __future__ import annotations

import functools
import random
import struct
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from hostagent import protocol as proto

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "p4src" / "p4ina.p4"

ING = "P4inaIngress"
EGR = "P4inaEgress"

DROP_REASONS = 8
MAX_JOBS = 16
DROP_UNKNOWN_JOB, DROP_NOT_ADMITTED, DROP_SLOT_RANGE, DROP_BAD_FORMAT, DROP_DUPLICATE, DROP_STALE = range(6)


# ------------------------------------------------------------------------------------------------ compile


@functools.lru_cache(maxsize=8)
def compiled_program(values: int = proto.VALUES_PER_PACKET) -> tuple[Any, bytes]:
    """(P4Info, device config bytes) of p4src/p4ina.p4 built for `values` values per packet (-D AGG_VALUES),
    compiled once per test session by the embedded compiler. The session uses six builds (64, 32, 128, 256, 512,
    2048): with room for four, test_aggregation_values.py compiled 32 twice and every later test compiled 64 again."""
    from p4switch import compiler

    defines = {} if values == proto.VALUES_PER_PACKET else {"AGG_VALUES": str(values)}
    result = compiler.compile_file(str(PROGRAM), defines=defines)
    p4info, config = result.p4info, result.device_config_bytes()
    return p4info, config


# --------------------------------------------------------------------------------------------- P4Runtime


class P4Names:
    """P4Info names -> ids, and P4Runtime entities built from names (what a controller would send)."""

    def __init__(self, p4info: Any) -> None:
        self.p4info = p4info
        self.tables = {t.preamble.name: t for t in p4info.tables}
        self.actions = {a.preamble.name: a for a in p4info.actions}
        self.counters = {c.preamble.name: c for c in p4info.counters}
        self.registers = {r.preamble.name: r for r in p4info.registers}

    def table_entry(self, table: str, match: dict[str, Any], action: str, params: dict[str, int],
                    priority: int = 0) -> Any:
        from p4.v1 import p4runtime_pb2

        from p4switch.runtime.entries import encode_bytes

        t = self.tables[table]
        a = self.actions[action]
        entity = p4runtime_pb2.Entity()
        te = entity.table_entry
        te.table_id = t.preamble.id
        fields = {m.name: m for m in t.match_fields}
        for name, value in match.items():
            mf = fields[name]
            fm = te.match.add()
            fm.field_id = mf.id
            if mf.match_type == mf.EXACT:
                fm.exact.value = encode_bytes(value)
            elif mf.match_type == mf.LPM:
                fm.lpm.value = encode_bytes(value[0])
                fm.lpm.prefix_len = value[1]
            elif mf.match_type == mf.TERNARY:
                fm.ternary.value = encode_bytes(value[0])
                fm.ternary.mask = encode_bytes(value[1])
            else:
                raise ValueError(f"unsupported match kind for {name}")
        if priority:
            te.priority = priority
        te.action.action.action_id = a.preamble.id
        pids = {p.name: p for p in a.params}
        if set(params) != set(pids):
            raise ValueError(f"{action}: params {sorted(params)} != {sorted(pids)}")
        for p in a.params:
            ap = te.action.action.params.add()
            ap.param_id = p.id
            ap.value = encode_bytes(params[p.name] & ((1 << p.bitwidth) - 1))
        return entity

    def multicast_group(self, group: int, ports: Iterable[int]) -> Any:
        from p4.v1 import p4runtime_pb2

        entity = p4runtime_pb2.Entity()
        g = entity.packet_replication_engine_entry.multicast_group_entry
        g.multicast_group_id = group
        for rid, port in enumerate(ports):
            r = g.replicas.add()
            r.egress_port = port
            r.instance = rid + 1
        return entity

    def register_entry(self, name: str, index: int, value: int | None = None) -> Any:
        from p4.v1 import p4runtime_pb2

        from p4switch.runtime.entries import encode_bytes

        entity = p4runtime_pb2.Entity()
        r = entity.register_entry
        r.register_id = self.registers[name].preamble.id
        r.index.index = index
        if value is not None:
            r.data.bitstring = encode_bytes(value)
        return entity

    def counter_entry(self, name: str, index: int) -> Any:
        from p4.v1 import p4runtime_pb2

        entity = p4runtime_pb2.Entity()
        c = entity.counter_entry
        c.counter_id = self.counters[name].preamble.id
        c.index.index = index
        return entity


# ------------------------------------------------------------------------------------------------ switches


@dataclass(frozen=True)
class Neighbor:
    """Who is behind a port, as `agg_neighbors` needs it."""

    mac: int
    ip: int
    udp_port: int = proto.AGG_PORT


def mac_str(mac: int) -> str:
    return ":".join(f"{(mac >> (8 * i)) & 0xFF:02x}" for i in range(5, -1, -1))


def ip_str(ip: int) -> str:
    return ".".join(str((ip >> (8 * i)) & 0xFF) for i in range(3, -1, -1))


class AggSwitch:
    """One embedded switch running p4ina.p4, written to only through P4Runtime entities: through the entity codec
    the P4Runtime server uses, or (`p4runtime=True`) through a real P4Runtime server on loopback and a client that
    set the pipeline, holds mastership and sends every write and read over gRPC."""

    def __init__(self, name: str, index: int, on_output: Callable[[str, int, bytes], None], *,
                 p4runtime: bool = False, values: int = proto.VALUES_PER_PACKET) -> None:
        from controller.p4info import P4InfoHelper
        from p4switch.switch.core import Switch

        p4info, config = compiled_program(values)
        self.name = name
        self.mac = 0x02_00_00_00_FF_00 + index
        self.ip = 0x0A_FF_00_00 + index
        self.names = P4Names(p4info)
        self.helper = P4InfoHelper(p4info)
        self.switch = Switch(device_id=0, seed=index)
        self.switch.add_output_callback(lambda port, frame: on_output(self.name, port, frame))
        self.switch.start()
        self.server: Any = None
        self.client: Any = None
        if p4runtime:
            from p4runtime_support import Client

            from p4switch.server.server import P4RuntimeServer

            self.server = P4RuntimeServer(self.switch, address="127.0.0.1:0").start()
            self.client = Client(f"127.0.0.1:{self.server.port}")
            self.client.arbitrate()
            self.client.set_pipeline(p4info, config)
        else:
            from p4switch.runtime.entries import EntityCodec

            self.switch.install_pipeline(p4info, config)
            self.codec = EntityCodec(self.switch.state)

    def _write(self, kind: int, entity: Any) -> None:
        if self.client is None:
            self.codec.write(kind, entity)
            return
        from p4.v1 import p4runtime_pb2

        code, details = self.client.write_updates(p4runtime_pb2.Update(type=kind, entity=entity))
        if code != "OK":
            raise RuntimeError(f"{self.name}: P4Runtime write failed: {code} {details}")

    def _read(self, entity: Any) -> list[Any]:
        return list(self.codec.read(entity) if self.client is None else self.client.read(entity))

    def neighbor(self) -> Neighbor:
        return Neighbor(self.mac, self.ip)

    def insert(self, entity: Any) -> None:
        from p4switch.runtime.entries import INSERT

        self._write(INSERT, entity)

    def modify(self, entity: Any) -> None:
        from p4switch.runtime.entries import MODIFY

        self._write(MODIFY, entity)

    def add_entry(self, table: str, match: dict[str, Any], action: str, **params: int) -> None:
        self.insert(self.names.table_entry(table, match, action, params))

    def add_group(self, group: int, ports: Iterable[int]) -> None:
        self.insert(self.names.multicast_group(group, ports))

    def counter(self, name: str, index: int) -> int:
        """Packets counted at `index` of counter `name` (read over the P4Runtime codec)."""
        (entity,) = self._read(self.names.counter_entry(name, index))
        return int(entity.counter_entry.data.packet_count)

    def drops(self, job_idx: int, reason: int) -> int:
        return self.counter(f"{ING}.output.agg_drops", job_idx * DROP_REASONS + reason)

    def read_register(self, name: str, index: int) -> int:
        (entity,) = self._read(self.names.register_entry(name, index))
        return int.from_bytes(entity.register_entry.data.bitstring, "big")

    def write_register(self, name: str, index: int, value: int) -> None:
        self.modify(self.names.register_entry(name, index, value))

    def inject(self, port: int, frame: bytes) -> None:
        self.switch.inject(port, frame)
        if not self.switch.wait_idle(30.0):
            raise RuntimeError(f"{self.name}: packet still in flight after 30 s")

    def stop(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.server is not None:
            self.server.stop(grace=0)
        self.switch.stop()


@dataclass
class JobOnSwitch:
    """A job's entries on one switch (docs/p4-program.md, "What the controller installs for a job")."""

    job_id: int
    job_idx: int
    slot_count: int
    children: dict[int, tuple[int, Neighbor]]  # port -> (child index, who is there)
    mcast_grp: int
    slot_base: int = 0
    scale: int = 0
    result_fmt: int = proto.FMT_INT32
    parent: tuple[int, int, Neighbor] | None = None  # (parent port, my index at the parent, the parent)


def install_job(sw: AggSwitch, job: JobOnSwitch) -> None:
    """Writes the job's entries as the controller would: `job` becomes a `SwitchJobPlan` and the entities come
    from the controller's own builder (`controller.program.switch_job_entities`), so the tests exercise the
    entries the controller installs; what the tests expect (sums, frames) stays computed here."""
    from controller.plan import AGG_PORT, Child, SwitchJobPlan
    from controller.program import switch_job_entities

    # the builder uses a child's port, index and address; name and is_host only label it
    children = tuple(Child(port=port, index=index, name=f"{sw.name}-port{port}", is_host=False, ip=ip_str(who.ip),
                           mac=mac_str(who.mac), udp_port=who.udp_port)
                     for port, (index, who) in sorted(job.children.items()))
    parent_port: int | None = None
    index_at_parent: int | None = None
    parent_mac = parent_ip = parent_name = ""
    if job.parent is not None:
        parent_port, index_at_parent, parent = job.parent
        if parent.udp_port != AGG_PORT:
            raise ValueError(f"{sw.name}: a parent switch listens on AGG_PORT, not {parent.udp_port}")
        parent_mac, parent_ip, parent_name = mac_str(parent.mac), ip_str(parent.ip), ip_str(parent.ip)
    plan = SwitchJobPlan(job_id=job.job_id, switch=sw.name, role="root" if job.parent is None else "inner",
                         is_root=job.parent is None, slot_base=job.slot_base, slot_count=job.slot_count,
                         group=job.mcast_grp, quant=proto.FORMAT_NAMES[job.result_fmt], children=children,
                         job_idx=job.job_idx, scale=job.scale, parent=parent_name or None, parent_port=parent_port,
                         index_at_parent=index_at_parent)
    for entity in switch_job_entities(sw.helper, plan, my_mac=mac_str(sw.mac), my_ip=ip_str(sw.ip),
                                      parent_mac=parent_mac, parent_ip=parent_ip):
        sw.insert(entity)


# ------------------------------------------------------------------------------------------------- workers


@dataclass
class Result:
    values: np.ndarray
    exp: int
    fmt: int
    count: int
    flags: int


@dataclass
class ParsedResult:
    eth_dst: int
    ip_dst: int
    udp_sport: int
    udp_dport: int
    job_id: int
    slot: int
    fmt: int
    flags: int
    ver: int
    child: int
    exp: int
    count: int
    seq: int
    step: int
    csum: int
    values: np.ndarray


def parse_result(frame: bytes) -> ParsedResult:
    """An aggregation frame read with the protocol's struct layout and numpy dtypes (no Scapy)."""
    (job_id, slot, fmt_flags, ver_child, exp, _r, count, _r2, seq, step, csum) = proto.AGG_HDR_STRUCT.unpack_from(
        frame, proto.AGG_OFFSET)
    fmt = fmt_flags >> 6
    values = np.frombuffer(frame, dtype=proto.VALUE_DTYPE[fmt], count=(len(frame) - proto.VALUES_OFFSET)
                           // proto.ELEMENT_SIZE[fmt], offset=proto.VALUES_OFFSET).astype(np.int64)
    sport, dport = struct.unpack_from("!HH", frame, proto.ETH_LEN + proto.IPV4_LEN)
    return ParsedResult(
        eth_dst=int.from_bytes(frame[0:6], "big"), ip_dst=int.from_bytes(frame[30:34], "big"), udp_sport=sport,
        udp_dport=dport, job_id=job_id, slot=slot, fmt=fmt, flags=fmt_flags & 0x3F, ver=ver_child >> 7,
        child=ver_child & 0x1F, exp=exp, count=count, seq=seq, step=step, csum=csum, values=values)


@dataclass
class SimWorker:
    """A SwitchML-style worker: chunk k goes to slot k % pool with version (k // pool) % 2; a slot is reused only
    after its RESULT came back; every RESULT is checked against the linear checksum."""

    name: str
    rank: int
    child: int
    job_id: int
    pool: int
    chunks: list[np.ndarray]
    fmt: int = proto.FMT_INT32
    exps: list[int] | None = None
    step: int = 1
    ver_base: int = 0  # versions continue across steps: the slot's next version when this step starts
    index: int = 0
    results: dict[int, Result] = field(default_factory=dict)
    outstanding: dict[int, int] = field(default_factory=dict)  # slot -> chunk
    bad_checksums: int = 0
    corrupt_flags: int = 0
    _template: bytes | None = None
    _checked: bool = False
    _checked_rx: bool = False

    @property
    def mac(self) -> int:
        return 0x02_00_00_00_00_00 + self.index

    @property
    def ip(self) -> int:
        return 0x0A_00_00_00 + self.index

    @property
    def udp_port(self) -> int:
        return 40000 + self.index

    def neighbor(self) -> Neighbor:
        return Neighbor(self.mac, self.ip, self.udp_port)

    def scapy_frame(self, k: int, retx: bool = False) -> bytes:
        """DATA for chunk `k`, built layer by layer with Scapy."""
        layers = proto.agg_layers(
            self.chunks[k], job_id=self.job_id, slot=k % self.pool, ver=self.version(k), seq=k, child=self.child,
            fmt=self.fmt, exp=self.exponent(k), flags=proto.FLAG_RETX if retx else 0, step=self.step,
            lanes=len(self.chunks[k]),
        )
        pkt = (Ether(src=mac_str(self.mac), dst="02:00:00:00:ff:00")
               / IP(src=ip_str(self.ip), dst="10.255.0.0", tos=proto.TOS_GRADIENT)
               / UDP(sport=self.udp_port, dport=proto.AGG_PORT, chksum=0) / layers)
        return bytes(pkt)

    def version(self, k: int) -> int:
        return (k // self.pool + self.ver_base) % 2

    def exponent(self, k: int) -> int:
        return self.exps[k] if self.exps else 0

    def frame(self, k: int, retx: bool = False) -> bytes:
        """DATA for chunk `k`: a Scapy-built template patched with the protocol's struct layout (as a host agent's
        hot path does); the first patched frame is checked against Scapy byte for byte."""
        if self._template is None:
            first = self.scapy_frame(k, retx)
            self._template = first
            return first
        data = bytearray(self._template)
        values = np.asarray(self.chunks[k], dtype=np.int64)
        proto.AGG_HDR_STRUCT.pack_into(
            data, proto.AGG_OFFSET, self.job_id, k % self.pool,
            proto.pack_fmt_flags(self.fmt, proto.FLAG_RETX if retx else 0),
            proto.pack_ver_child(self.version(k), self.child), self.exponent(k), 0, 1, 0, k, self.step,
            proto.checksum(values))
        data[proto.VALUES_OFFSET:] = values.astype(proto.VALUE_DTYPE[self.fmt]).tobytes()
        if not self._checked:
            assert bytes(data) == self.scapy_frame(k, retx), "template frame differs from the Scapy-built one"
            self._checked = True
        return bytes(data)

    def next_step(self, chunks: list[np.ndarray]) -> None:
        """Start the next collective: new chunks, `seq` from 0 again, every slot continuing its versions."""
        uses = -(-len(self.chunks) // self.pool)
        assert len(self.chunks) % self.pool == 0, "keep every slot's version in step"
        self.ver_base = (self.ver_base + uses) % 2
        self.step += 1
        self.chunks = chunks
        self.results = {}
        self.outstanding = {}

    def start(self) -> list[bytes]:
        first = range(min(self.pool, len(self.chunks)))
        for k in first:
            self.outstanding[k % self.pool] = k
        return [self.frame(k) for k in first]

    def retransmit(self) -> list[bytes]:
        return [self.frame(k, retx=True) for k in sorted(self.outstanding.values())]

    @property
    def done(self) -> bool:
        return len(self.results) == len(self.chunks)

    def receive(self, frame: bytes) -> list[bytes]:
        hdr = parse_result(frame)
        if not self._checked_rx:
            pkt = Ether(frame)
            assert pkt.haslayer(proto.AggHeader), f"{self.name} got a non-aggregation frame: {pkt.summary()}"
            scapy_view = pkt[proto.AggHeader]
            assert (scapy_view.seq, scapy_view.slot, scapy_view.csum, list(scapy_view.payload.values)) == (
                hdr.seq, hdr.slot, hdr.csum, hdr.values.tolist())
            self._checked_rx = True
        assert hdr.eth_dst == self.mac and hdr.ip_dst == self.ip, f"{self.name}: misaddressed RESULT"
        assert hdr.udp_dport == self.udp_port and hdr.udp_sport == proto.AGG_PORT
        assert hdr.flags & proto.FLAG_RESULT and hdr.job_id == self.job_id and hdr.child == 0
        if hdr.step != self.step:
            return []  # a late RESULT of an earlier step
        values = hdr.values
        # The checksum of a saturated result is not meaningful (docs/protocol.md): such results are reported as
        # they are, with OVERFLOW set.
        if not hdr.flags & proto.FLAG_OVERFLOW and proto.checksum(values) != hdr.csum:
            self.bad_checksums += 1
            return []
        if hdr.flags & proto.FLAG_CORRUPT:
            self.corrupt_flags += 1
            return []
        k = hdr.seq
        result = Result(values, int(hdr.exp), int(hdr.fmt), int(hdr.count), int(hdr.flags))
        if k in self.results:
            assert np.array_equal(self.results[k].values, values), f"{self.name}: two different results for {k}"
            return []
        assert self.outstanding.get(hdr.slot) == k, f"{self.name}: result for chunk {k} not outstanding"
        self.results[k] = result
        del self.outstanding[hdr.slot]
        nxt = k + self.pool  # the slot's next use, with the other version
        if nxt < len(self.chunks):
            self.outstanding[hdr.slot] = nxt
            return [self.frame(nxt)]
        return []


# -------------------------------------------------------------------------------------------------- fabric


def flip_bit(frame: bytes, bit: int) -> bytes:
    data = bytearray(frame)
    data[bit // 8] ^= 0x80 >> (bit % 8)
    return bytes(data)


@dataclass
class InFlight:
    kind: str  # "switch" or "worker"
    target: str
    port: int
    frame: bytes
    origin: str


class Fabric:
    """Switches, workers and the links between them; frames move only when the test says so."""

    def __init__(self) -> None:
        self.switches: dict[str, AggSwitch] = {}
        self.workers: dict[str, SimWorker] = {}
        self.links: dict[tuple[str, int], tuple[str, str, int]] = {}  # (switch, port) -> (kind, name, port)
        self.worker_port: dict[str, tuple[str, int]] = {}
        self.in_flight: list[InFlight] = []
        self.delivered = 0
        self.taken = 0
        self._lock = threading.Lock()
        self.unexpected: list[tuple[str, int]] = []

    def add_switch(self, name: str, *, p4runtime: bool = False, values: int = proto.VALUES_PER_PACKET) -> AggSwitch:
        sw = AggSwitch(name, len(self.switches), self._on_output, p4runtime=p4runtime, values=values)
        self.switches[name] = sw
        return sw

    def attach_worker(self, worker: SimWorker, switch: str, port: int) -> None:
        worker.index = len(self.workers) + 1
        self.workers[worker.name] = worker
        self.links[(switch, port)] = ("worker", worker.name, 0)
        self.worker_port[worker.name] = (switch, port)

    def connect(self, a: str, a_port: int, b: str, b_port: int) -> None:
        self.links[(a, a_port)] = ("switch", b, b_port)
        self.links[(b, b_port)] = ("switch", a, a_port)

    def _on_output(self, switch: str, port: int, frame: bytes) -> None:
        dest = self.links.get((switch, port))
        with self._lock:
            if dest is None:
                self.unexpected.append((switch, port))
                return
            self.in_flight.append(InFlight(dest[0], dest[1], dest[2], frame, f"{switch}:{port}"))

    def send_from_worker(self, worker: str, frames: list[bytes]) -> None:
        switch, port = self.worker_port[worker]
        for f in frames:
            self.in_flight.append(InFlight("switch", switch, port, f, worker))

    def deliver(self, item: InFlight) -> None:
        self.delivered += 1
        if item.kind == "switch":
            self.switches[item.target].inject(item.port, item.frame)
        else:
            w = self.workers[item.target]
            self.send_from_worker(w.name, w.receive(item.frame))

    def run(
        self,
        *,
        rng: random.Random | None = None,
        fate: Callable[[int, InFlight], str] | None = None,
        max_silences: int = 50,
    ) -> int:
        """Move frames until every worker has all its results. `rng` picks the next frame at random (otherwise
        FIFO); `fate(n, frame)` returns "deliver", "drop" or "dup" for the n-th frame taken. Returns how many
        times the network fell silent and workers retransmitted."""
        for w in self.workers.values():
            self.send_from_worker(w.name, w.start())
        silences = 0
        taken = 0
        while not all(w.done for w in self.workers.values()):
            if not self.in_flight:
                silences += 1
                assert silences <= max_silences, "workers keep retransmitting without progress"
                for w in self.workers.values():
                    self.send_from_worker(w.name, w.retransmit())
                continue
            i = rng.randrange(len(self.in_flight)) if rng is not None else 0
            item = self.in_flight.pop(i)
            what = fate(taken, item) if fate is not None else "deliver"
            taken += 1
            if what == "drop":
                continue
            if what == "corrupt":
                item.frame = flip_bit(item.frame, proto.VALUES_OFFSET * 8 + 13)
            if what == "dup":
                self.deliver(InFlight(item.kind, item.target, item.port, item.frame, item.origin))
            self.deliver(item)
        self.taken = taken
        return silences

    def stop(self) -> None:
        for sw in self.switches.values():
            sw.stop()


def single_switch(workers: list[SimWorker], *, job_id: int = 1, job_idx: int = 0, slot_base: int = 0,
                  slot_count: int | None = None, scale: int = 0, result_fmt: int = proto.FMT_INT32,
                  fabric: Fabric | None = None, first_port: int = 1, name: str = "s1", p4runtime: bool = False
                  ) -> Fabric:
    """One switch as the root of a job whose workers sit on ports first_port, first_port+1, ..."""
    fabric = fabric or Fabric()
    sw = fabric.switches.get(name) or fabric.add_switch(name, p4runtime=p4runtime)
    children = {}
    for i, w in enumerate(workers):
        fabric.attach_worker(w, name, first_port + i)
        children[first_port + i] = (w.child, w.neighbor())
    install_job(sw, JobOnSwitch(job_id=job_id, job_idx=job_idx, slot_base=slot_base,
                                slot_count=slot_count or workers[0].pool, children=children,
                                mcast_grp=job_idx + 1, scale=scale, result_fmt=result_fmt))
    return fabric


def make_workers(n: int, chunks: int, *, pool: int, job_id: int = 1, seed: int = 0, low: int = -(2**20),
                 high: int = 2**20, fmt: int = proto.FMT_INT32, prefix: str = "w",
                 lanes: int = proto.VALUES_PER_PACKET) -> list[SimWorker]:
    rng = np.random.default_rng(seed)
    lo, hi = proto.VALUE_RANGE[fmt]
    low, high = max(low, lo), min(high, hi)
    return [
        SimWorker(name=f"{prefix}{r}", rank=r, child=r, job_id=job_id, pool=pool, fmt=fmt,
                  chunks=[rng.integers(low, high, lanes, endpoint=True) for _ in range(chunks)])
        for r in range(n)
    ]


def expected_sums(workers: list[SimWorker]) -> list[np.ndarray]:
    n = len(workers[0].chunks)
    return [np.sum([w.chunks[k].astype(np.int64) for w in workers], axis=0) for k in range(n)]


TreeSpec = dict[str, "TreeSpec | int"]


def build_tree(fabric: Fabric, spec: TreeSpec, workers: list[SimWorker], *, job_id: int = 1, pool: int,
               scale: int = 0, result_fmt: int = proto.FMT_INT32) -> None:
    """A job's reduction tree from a compact description: `{"root": {"inner": {"leaf1": 2, "leaf2": 1}, "leaf3": 3}}`
    (a switch maps to its child switches, or to its number of workers). Children sit on ports 1..n of their
    parent switch, each switch reaches its parent on port n+1; workers are taken from `workers` in order."""
    ((root, children),) = spec.items()
    queue = list(workers)
    _build_subtree(fabric, root, children, None, queue, job_id, pool, scale, result_fmt)
    assert not queue, f"{len(queue)} workers left over"


def _build_subtree(fabric: Fabric, name: str, children: TreeSpec | int, parent: tuple[int, Neighbor] | None,
                   queue: list[SimWorker], job_id: int, pool: int, scale: int, result_fmt: int) -> AggSwitch:
    sw = fabric.add_switch(name)
    members: dict[int, tuple[int, Neighbor]] = {}
    if isinstance(children, int):
        for i in range(children):
            w = queue.pop(0)
            w.child = i
            fabric.attach_worker(w, name, i + 1)
            members[i + 1] = (i, w.neighbor())
    else:
        for i, (child_name, grand) in enumerate(children.items()):
            child = _build_subtree(fabric, child_name, grand, (i, sw.neighbor()), queue, job_id, pool, scale,
                                   result_fmt)
            child_uplink = (grand if isinstance(grand, int) else len(grand)) + 1
            fabric.connect(name, i + 1, child_name, child_uplink)
            members[i + 1] = (i, child.neighbor())
    n = len(members)
    job_parent = None if parent is None else (n + 1, parent[0], parent[1])
    install_job(sw, JobOnSwitch(job_id=job_id, job_idx=0, slot_count=pool, children=members, mcast_grp=1,
                                scale=scale, result_fmt=result_fmt, parent=job_parent))
    return sw


def running_fabric() -> Iterator[Fabric]:
    """The body of the aggregation tests' `fabric` fixtures: p4ina.p4 compiled first (once, cached, so a compile
    error fails before any switch starts), a `Fabric`, stopped when the test is done."""
    compiled_program()
    fabric = Fabric()
    try:
        yield fabric
    finally:
        fabric.stop()
