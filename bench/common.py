"""One embedded switch running p4ina.p4, hosts on ports 1..n, and jobs rooted at it: the set-up the host-agent,
training and quantization benchmarks share. Entries go through the P4Runtime codec, as a controller's would.
(`common` is not a benchmark: bench/cli.py skips it.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PROGRAM = Path(__file__).resolve().parents[1] / "p4src" / "p4ina.p4"
ING, EGR = "P4inaIngress", "P4inaEgress"
SWITCH_MAC, SWITCH_IP = 0x020000000100, 0x0A000164
HOST_MAC, HOST_IP = 0x020000000010, 0x0A000010  # host r: HOST_MAC + r, HOST_IP + r


def unavailable() -> str | None:
    """Why a single-switch benchmark cannot run here (`p4ina bench` lists it instead of failing)."""
    if not PROGRAM.exists():
        return f"{PROGRAM} is missing"
    try:
        import p4switch.compiler  # noqa: F401
    except ImportError as exc:
        return f"the embedded compiler cannot be imported: {exc}"
    return None


class SingleSwitch:
    """A started embedded switch with p4ina.p4 installed; `add_job` makes it the root of a job."""

    def __init__(self, program: Path = PROGRAM) -> None:
        from controller.p4info import P4InfoHelper
        from p4switch.compiler import compile_file
        from p4switch.runtime.entries import EntityCodec
        from p4switch.switch.core import Switch

        compiled = compile_file(str(program))
        self.switch = Switch(seed=1)
        self.switch.install_pipeline(compiled.p4info, compiled.device_config_bytes())
        self.switch.start()
        self.helper = P4InfoHelper(compiled.p4info)
        self.codec = EntityCodec(self.switch.state)

    def add_job(self, job: int, n: int, *, pool: int, udp_base: int, job_idx: int = 0, slot_base: int = 0,
                result_fmt: int = 0) -> None:
        """Job `job` of `n` workers: child r on port r + 1, its RESULTs to UDP port udp_base + r; slots
        slot_base .. slot_base + pool - 1; multicast group `job`; RESULTs sent in format `result_fmt`."""
        from controller.client import entity
        from controller.p4info import multicast_group
        from p4switch.runtime.entries import INSERT

        h = self.helper
        ports = list(range(1, n + 1))
        writes: list[Any] = [multicast_group(job, [(p, i + 1) for i, p in enumerate(ports)])]
        writes.append(h.table_entry(f"{ING}.admission.job", {"hdr.agg.job_id": job}, f"{ING}.admission.set_job_root",
                                    {"job_idx": job_idx, "slot_base": slot_base, "slot_count": pool, "children": n,
                                     "mcast_grp": job, "scale": 0, "result_fmt": result_fmt}))
        for r, port in enumerate(ports):
            writes.append(h.table_entry(f"{ING}.admission.agg_children", {"standard_metadata.ingress_port": port,
                                        "hdr.agg.job_id": job, "hdr.agg.child": r}, f"{ING}.admission.admit"))
            writes.append(h.table_entry(f"{EGR}.agg_rewrite.agg_neighbors",
                                        {"hdr.agg.job_id": job, "standard_metadata.egress_port": port},
                                        f"{EGR}.agg_rewrite.set_neighbor",
                                        {"src_mac": SWITCH_MAC, "dst_mac": HOST_MAC + r, "src_addr": SWITCH_IP,
                                         "dst_addr": HOST_IP + r, "dst_port": udp_base + r}))
        for w in writes:
            self.codec.write(INSERT, entity(w))

    def stop(self) -> None:
        self.switch.stop()
