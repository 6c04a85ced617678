"""One embedded switch running p4ina.p4, hosts on ports 1..n, and jobs rooted at it: the set-up the host-agent,
training and quantization benchmarks share. Entries go through the P4Runtime codec, as a controller's would.
(`common` is not a benchmark: bench/cli.py skips it.)"""

from __future__ import annotations

from pathlib import Path

PROGRAM = Path(__file__).resolve().parents[1] / "p4src" / "p4ina.p4"
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


def _mac(value: int) -> str:
    return ":".join(f"{(value >> (8 * i)) & 0xFF:02x}" for i in range(5, -1, -1))


def _ip(value: int) -> str:
    return ".".join(str((value >> (8 * i)) & 0xFF) for i in range(3, -1, -1))


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
        slot_base .. slot_base + pool - 1; multicast group `job`; RESULTs sent in format `result_fmt`. The entries
        are the controller's (`controller.program.switch_job_entities`), so the benchmark measures what the
        controller installs."""
        from controller.plan import Child, SwitchJobPlan
        from controller.program import switch_job_entities
        from hostagent.protocol import FORMAT_NAMES
        from p4switch.runtime.entries import INSERT

        children = tuple(Child(port=r + 1, index=r, name=f"h{r + 1}", is_host=True, ip=_ip(HOST_IP + r),
                               mac=_mac(HOST_MAC + r), udp_port=udp_base + r) for r in range(n))
        plan = SwitchJobPlan(job_id=job, switch="s1", role="root", is_root=True, slot_base=slot_base,
                             slot_count=pool, group=job, quant=FORMAT_NAMES[result_fmt], children=children,
                             job_idx=job_idx)
        for e in switch_job_entities(self.helper, plan, my_mac=_mac(SWITCH_MAC), my_ip=_ip(SWITCH_IP)):
            self.codec.write(INSERT, e)

    def stop(self) -> None:
        self.switch.stop()
