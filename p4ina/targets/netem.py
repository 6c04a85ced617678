"""Link impairments with Linux netem (`tc qdisc ... netem`), for targets whose switch cannot impair packets itself.

Used where the kernel has `sch_netem` (users' machines running BMv2). When it does not, the error says so and points
at the embedded target, whose ports apply the same impairments in the switch.
"""

from __future__ import annotations

import shutil
import subprocess

from p4ina.targets.base import PortImpairment
from p4ina.targets.exceptions import AdminError, UnsupportedOperationError


def netem_args(impairment: PortImpairment) -> list[str]:
    """The `netem` options for an impairment (egress only; netem has no ingress qdisc without ifb)."""
    args: list[str] = []
    if impairment.delay_ms or impairment.jitter_ms or impairment.reorder:
        # netem reorders only delayed packets: a reorder without delay gets netem's minimal useful delay of 1 ms.
        delay = impairment.delay_ms or 1.0
        args += ["delay", f"{delay:g}ms"]
        if impairment.jitter_ms:
            args.append(f"{impairment.jitter_ms:g}ms")
    if impairment.loss:
        args += ["loss", f"{impairment.loss * 100:g}%"]
    if impairment.duplicate:
        args += ["duplicate", f"{impairment.duplicate * 100:g}%"]
    if impairment.reorder:
        args += ["reorder", f"{impairment.reorder * 100:g}%"]
    if impairment.corrupt:
        args += ["corrupt", f"{impairment.corrupt * 100:g}%"]
    return args


def netem_command(interface: str, impairment: PortImpairment) -> list[str]:
    """The `tc` command line that applies (or, for a null impairment, removes) the impairment on `interface`."""
    if impairment.direction != "egress":
        raise UnsupportedOperationError(
            f"netem impairs only what {interface} sends (egress); {impairment.direction} impairments need the "
            "embedded target's port impairments")
    if impairment.is_null:
        return ["tc", "qdisc", "del", "dev", interface, "root"]
    return ["tc", "qdisc", "replace", "dev", interface, "root", "netem", *netem_args(impairment)]


def apply_netem(interface: str, impairment: PortImpairment) -> None:
    if shutil.which("tc") is None:
        raise UnsupportedOperationError("link impairments need `tc` (Debian package iproute2)")
    argv = netem_command(interface, impairment)
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode == 0:
        return
    err = (result.stderr or result.stdout).strip()
    if impairment.is_null and ("No such file" in err or "Cannot delete qdisc with handle of zero" in err):
        return  # nothing to remove
    if "qdisc kind is unknown" in err:
        raise UnsupportedOperationError(
            "this kernel has no netem (module sch_netem), so tc cannot impair links; "
            "use --target embedded, whose switch ports apply loss/duplication/delay themselves")
    raise AdminError(f"{' '.join(argv)}: {err or f'exit status {result.returncode}'}")
