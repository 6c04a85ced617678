"""BMv2's Thrift admin CLI (`simple_switch_CLI`): what P4Runtime cannot do on BMv2.

simple_switch_grpc answers P4Runtime register writes with UNIMPLEMENTED (p4lang/PI#376), so the controller clears a
job's slot registers through BMv2's own admin interface instead (`register_write`), and the BMv2 target uses the same
CLI for queue rates and depths. One module owns how the CLI is found and started:

`simple_switch_CLI` is a `#!/usr/bin/env python3` script whose modules (`sswitch_CLI`, `runtime_CLI`, `bm_runtime`,
`thrift`) live in the Python that BMv2 was installed for. Started through the shebang it runs under the first
`python3` on PATH, which inside this project's virtual environment is the venv's interpreter, without those modules.
So the script is started explicitly under the first interpreter that can import every top-level module it imports,
and when none can, the error names the modules and the interpreters tried.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from controller.exceptions import ControllerError

THRIFT_CLI = "simple_switch_CLI"
_CLI_ERROR = re.compile(r"^(?:RuntimeCmd:\s*)?(Error|Invalid|Could not connect|Bad format|\*\*\* Unknown)[^\n]*",
                        re.MULTILINE)
_PYTHON_SHEBANG = re.compile(rb"^#!\s*(?:/usr/bin/env\s+)?(\S*python[\d.]*)\b")


class ThriftCliError(ControllerError):
    """simple_switch_CLI is missing, cannot run, or reported an error."""


@dataclass(frozen=True)
class CliCommand:
    """How to start simple_switch_CLI: `argv` then `--thrift-ip/--thrift-port`."""

    argv: tuple[str, ...]
    interpreter: str | None  # None: not a Python script, started directly


def script_imports(script: Path) -> list[str]:
    """The top-level modules a Python script imports (module level and inside functions), in order."""
    try:
        tree = ast.parse(script.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    stdlib = set(sys.stdlib_module_names)
    return [n for n in dict.fromkeys(names) if n not in stdlib]


def candidate_interpreters(shebang_python: str, path: str | None = None) -> list[str]:
    """Interpreters to try, best first: the shebang's own (an absolute path), then every `python3` on PATH outside a
    virtual environment, then the system's /usr/bin/python3 and /usr/local/bin/python3, then this one."""
    out: list[str] = []
    if os.path.isabs(shebang_python):
        out.append(shebang_python)
    name = os.path.basename(shebang_python) or "python3"
    for directory in (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep):
        if not directory:
            continue
        exe = Path(directory) / name
        in_venv = (Path(directory).parent / "pyvenv.cfg").exists()
        if exe.is_file() and os.access(exe, os.X_OK) and not in_venv:
            out.append(str(exe))
    out += ["/usr/bin/python3", "/usr/local/bin/python3", sys.executable]
    seen: dict[str, None] = {}
    for exe_path in out:
        if Path(exe_path).exists():
            seen.setdefault(exe_path, None)
    return list(seen)


def _imports_ok(interpreter: str, modules: Sequence[str], timeout: float = 20.0) -> bool:
    if not modules:
        return True
    code = "import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)"
    try:
        result = subprocess.run([interpreter, "-c", code, *modules], capture_output=True, timeout=timeout,
                                check=False, env=_clean_env())
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def _clean_env() -> dict[str, str]:
    """The environment without this virtual environment's marks, so another interpreter sees its own packages."""
    env = dict(os.environ)
    for key in ("PYTHONHOME", "PYTHONPATH", "VIRTUAL_ENV", "__PYVENV_LAUNCHER__"):
        env.pop(key, None)
    return env


def resolve_cli(path: str | None = None) -> CliCommand:
    """How to start simple_switch_CLI here, or a `ThriftCliError` that says exactly what is missing."""
    script = shutil.which(THRIFT_CLI, path=path)
    if script is None:
        raise ThriftCliError(f"{THRIFT_CLI} is not on PATH: BMv2 admin operations (queues, register writes) need "
                             "BMv2's Thrift CLI, installed with behavioral-model (--with-thrift)")
    try:
        with open(script, "rb") as f:
            first = f.readline(256)
    except OSError as exc:
        raise ThriftCliError(f"{script}: {exc.strerror}") from None
    shebang = _PYTHON_SHEBANG.match(first)
    if shebang is None:
        return CliCommand((script,), None)
    modules = script_imports(Path(script))
    tried = candidate_interpreters(shebang.group(1).decode(), path)
    for interpreter in tried:
        if _imports_ok(interpreter, modules):
            return CliCommand((interpreter, script), interpreter)
    raise ThriftCliError(f"{script} imports {', '.join(modules)}, which none of these interpreters has: "
                         f"{', '.join(tried)}; install BMv2's Python modules (thrift and behavioral-model's "
                         "runtime_CLI/bm_runtime) for one of them")


def run_cli(command: CliCommand, host: str, port: int, lines: Sequence[str], *, timeout: float = 20.0,
            what: str = "switch") -> str:
    """Feed `lines` to simple_switch_CLI on stdin; its output, or `ThriftCliError` on any reported error."""
    argv = [*command.argv, "--thrift-ip", host, "--thrift-port", str(port)]
    env = _clean_env() if command.interpreter is not None else None
    try:
        result = subprocess.run(argv, input="\n".join(lines) + "\n", capture_output=True, text=True,
                                timeout=timeout, check=False, env=env)
    except subprocess.TimeoutExpired:
        raise ThriftCliError(f"{what}: {THRIFT_CLI} did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise ThriftCliError(f"{what}: cannot start {argv[0]}: {exc.strerror}") from None
    output = result.stdout + result.stderr
    match = _CLI_ERROR.search(output)
    if result.returncode != 0 or match:
        text = output.strip().splitlines()
        detail = match.group(0).strip() if match else (text[-1] if text else f"exit status {result.returncode}")
        shown = "; ".join(lines[:3]) + (f"; ... ({len(lines)} commands)" if len(lines) > 3 else "")
        raise ThriftCliError(f"{what}: {THRIFT_CLI} {shown}: {detail}")
    return output


def split_address(address: str) -> tuple[str, int]:
    """`host:port` -> (host, port), with a clear error for anything else."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ThriftCliError(f"Thrift address {address!r}: expected HOST:PORT")
    return host, int(port)


def write_registers(address: str, writes: Sequence[tuple[str, int, int]], *, what: str = "switch",
                    command: CliCommand | None = None, batch: int = 2000) -> None:
    """`register_write NAME INDEX VALUE` for each write, through one CLI process per `batch` commands."""
    if not writes:
        return
    cli = command or resolve_cli()
    host, port = split_address(address)
    lines = [f"register_write {name} {index} {value}" for name, index, value in writes]
    for start in range(0, len(lines), batch):
        run_cli(cli, host, port, lines[start:start + batch], timeout=60.0, what=what)
