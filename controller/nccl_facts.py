"""A host's facts for its NCCL topology file: which NUMA node and PCI device its fabric NIC sits on, how fast it is.

NCCL reads from sysfs whatever attribute an `NCCL_TOPO_FILE` leaves out, so a topology file must not guess: an
invented PCI bus id or CPU model is worse than none. The facts come from the topology file (a host's `nccl:`
mapping, for real clusters whose inventory is known) or from this machine's /sys for a NIC it has (`p4ina ctl
nccl-topo --host H --from-sys DEV`, run on H); anything neither gives is left out.
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.exceptions import TopologyError

_BUSID = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_NETDEV = re.compile(r"^[A-Za-z0-9_.:@-]{1,15}$")
KEYS = ("netdev", "numaid", "busid", "speed_mbps", "arch", "vendor", "familyid", "modelid")


@dataclass(frozen=True)
class NicFacts:
    """What is known of one host's fabric NIC and the CPU it hangs off; None where unknown."""

    netdev: str | None = None
    numaid: int | None = None
    busid: str | None = None  # PCI domain:bus:device.function, lower case
    speed_mbps: int | None = None
    arch: str | None = None
    vendor: str | None = None
    familyid: int | None = None
    modelid: int | None = None

    def cpu_attrs(self) -> dict[str, str]:
        pairs = (("numaid", self.numaid), ("arch", self.arch), ("vendor", self.vendor),
                 ("familyid", self.familyid), ("modelid", self.modelid))
        return {k: str(v) for k, v in pairs if v is not None}


def from_mapping(data: Mapping[str, Any] | None, where: str) -> NicFacts:
    """Facts given in a topology file (`nccl:` of a host), checked: bad ones are a `TopologyError`, not a guess."""
    if not data:
        return NicFacts()
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise TopologyError(f"{where}: unknown nccl keys {', '.join(unknown)} (known: {', '.join(KEYS)})")
    try:
        facts = NicFacts(
            netdev=_checked(data.get("netdev"), _NETDEV, "netdev", where),
            numaid=_int(data.get("numaid"), "numaid", where, low=0),
            busid=(_checked(data.get("busid"), _BUSID, "busid", where) or "").lower() or None,
            speed_mbps=_int(data.get("speed_mbps"), "speed_mbps", where, low=1),
            arch=str(data["arch"]) if data.get("arch") is not None else None,
            vendor=str(data["vendor"]) if data.get("vendor") is not None else None,
            familyid=_int(data.get("familyid"), "familyid", where, low=0),
            modelid=_int(data.get("modelid"), "modelid", where, low=0),
        )
    except (TypeError, ValueError) as exc:
        raise TopologyError(f"{where}: bad nccl facts: {exc}") from None
    return facts


def _checked(value: Any, pattern: re.Pattern[str], key: str, where: str) -> str | None:
    if value is None:
        return None
    text = str(value)
    if not pattern.match(text):
        raise TopologyError(f"{where}: nccl {key} {text!r} is malformed")
    return text


def _int(value: Any, key: str, where: str, *, low: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or int(value) != value or int(value) < low:
        raise TopologyError(f"{where}: nccl {key} must be an integer >= {low}, got {value!r}")
    return int(value)


def from_sysfs(netdev: str, root: Path = Path("/")) -> NicFacts:
    """This machine's facts for interface `netdev`, read from /sys and /proc/cpuinfo (below `root`, for tests). A
    virtual interface (veth, the emulated fabric's) has no PCI device: busid and NUMA node stay unknown."""
    if not _NETDEV.match(netdev):
        raise TopologyError(f"interface name {netdev!r} is malformed")
    net = root / "sys" / "class" / "net" / netdev
    if not net.exists():
        raise TopologyError(f"no interface {netdev} on this machine ({net} does not exist)")
    busid = numaid = speed = None
    device = net / "device"
    if device.exists():
        name = os.path.basename(os.path.realpath(device))
        busid = name.lower() if _BUSID.match(name) else None
        numa = _read(device / "numa_node")
        numaid = int(numa) if numa is not None and numa.lstrip("-").isdigit() and int(numa) >= 0 else None
    raw_speed = _read(net / "speed")  # Mbit/s; -1 or unreadable (EINVAL) when the driver does not say
    if raw_speed is not None and raw_speed.isdigit() and int(raw_speed) > 0:
        speed = int(raw_speed)
    vendor = family = model = None
    cpuinfo = _read(root / "proc" / "cpuinfo") or ""
    for line in cpuinfo.splitlines():
        key, _, value = (part.strip() for part in line.partition(":"))
        if key == "vendor_id" and vendor is None:
            vendor = value
        elif key == "cpu family" and family is None and value.isdigit():
            family = int(value)
        elif key == "model" and model is None and value.isdigit():
            model = int(value)
    return NicFacts(netdev=netdev, numaid=numaid, busid=busid, speed_mbps=speed, arch=platform.machine() or None,
                    vendor=vendor, familyid=family, modelid=model)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
