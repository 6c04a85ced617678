"""Plug p4ina into Mininet's `mn`: `mn --custom mininet/p4fabric/custom.py --switch p4ina --topo leafspine,2,2`.

`mn` executes this file with the system Python and copies every name defined here into its own globals, so the
names below are kept to what `mn` reads: `topos`, `switches`, `links`, and `findController` (P4 switches take
their control plane over P4Runtime, so with `--switch p4ina` no OpenFlow controller is needed or started).
Switch options pass through `mn`'s syntax: `--switch p4ina,target=bmv2,pcap=1,verbose=1,log_dir=/tmp/logs`.
"""

import sys as _sys
from pathlib import Path as _Path


def _use_project_environment() -> None:
    """`mn` runs /usr/bin/python3; make the project and its virtual environment's packages importable."""
    import inspect
    import os
    import site

    frame = inspect.currentframe()
    # mn exec()s this file without __file__; the code object still knows where it came from.
    here = _Path(frame.f_code.co_filename if frame is not None else ".")
    repo = here.resolve().parents[2]
    for path in (repo, repo / "mininet"):
        if str(path) not in _sys.path:
            _sys.path.insert(0, str(path))
    # The venv's own layout (Debian's sysconfig scheme would point under local/ instead).
    purelib = repo / ".venv" / "lib" / f"python{_sys.version_info[0]}.{_sys.version_info[1]}" / "site-packages"
    if purelib.is_dir():
        site.addsitedir(str(purelib))
    # Switches run as `python -m p4ina switch` with this same interpreter: give them the same path.
    extra = [str(repo), str(repo / "mininet"), *([str(purelib)] if purelib.is_dir() else [])]
    current = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join([*extra, *([current] if current else [])])


_use_project_environment()

from mininet.node import NullController as _NullController  # noqa: E402
from mininet.node import findController as _find_openflow_controller  # noqa: E402

from p4fabric.node import P4Link as _P4Link  # noqa: E402
from p4fabric.node import P4Switch as _P4Switch  # noqa: E402
from p4fabric.topos import TOPOS as _TOPOS  # noqa: E402

topos = dict(_TOPOS)
switches = {"p4ina": _P4Switch}
links = {"p4ina": _P4Link}


def _p4_switch_requested() -> bool:
    argv = _sys.argv
    for i, arg in enumerate(argv):
        if arg.startswith("--switch="):
            value = arg.split("=", 1)[1]
        elif arg == "--switch" and i + 1 < len(argv):
            value = argv[i + 1]
        else:
            continue
        if value.split(",")[0] == "p4ina":
            return True
    return False


def findController(*args, **kwargs):
    """mn asks for a default OpenFlow controller when none is given; P4 switches do not use one."""
    if _p4_switch_requested():
        return _NullController
    return _find_openflow_controller(*args, **kwargs)
