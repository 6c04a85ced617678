"""Switch processes: launch with a log file and a PID file, wait until the P4Runtime port answers, stop by PID.

Shared by every target so that readiness and shutdown behave the same whichever binary runs the switch.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from p4ina.targets.exceptions import SwitchStartError
from p4ina.targets.tls import SwitchTls, open_channel

#: Environment variable set on every process p4ina launches; clean-up checks it before killing a recorded PID, so a
#: PID reused by the system after a crash is never touched.
OWNER_ENV = "P4INA_OWNER"


def log_tail(path: Path | None, lines: int = 20) -> str:
    """The last `lines` lines of a log file, for error messages ("" when there is none)."""
    if path is None or not path.exists():
        return ""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 16384))
        text = handle.read().decode("utf-8", "replace")
    return "\n".join(text.splitlines()[-lines:])


def free_tcp_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now (the kernel's choice), for gRPC/Thrift servers of switches."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


class SwitchProcess:
    """A launched switch: its PID, log and PID file. `stop()` is idempotent and only ever signals this PID."""

    def __init__(self, name: str, argv: Sequence[str], log_file: Path, pid_file: Path | None,
                 popen: subprocess.Popen[bytes]) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_file = log_file
        self.pid_file = pid_file
        self._popen = popen

    @property
    def pid(self) -> int:
        return self._popen.pid

    def alive(self) -> bool:
        return self._popen.poll() is None

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    def kill(self) -> None:
        """SIGKILL now (fault injection: a switch that dies without shutting down)."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._popen.wait()
        self._forget_pid_file()

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after `timeout` seconds. Safe to call any number of times."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            try:
                self._popen.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                self._popen.wait()
        else:
            self._popen.poll()
        self._forget_pid_file()

    def _forget_pid_file(self) -> None:
        if self.pid_file is not None:
            with contextlib.suppress(FileNotFoundError):
                self.pid_file.unlink()

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_file, lines)

    def __repr__(self) -> str:
        state = "running" if self.alive() else f"exited {self.returncode}"
        return f"SwitchProcess({self.name!r}, pid={self.pid}, {state})"


def launch(name: str, argv: Sequence[str], *, log_file: Path, pid_file: Path | None = None,
           env: Mapping[str, str] | None = None, owner: str = "p4ina") -> SwitchProcess:
    """Start `argv` with stdout and stderr appended to `log_file`; record its PID in `pid_file` if given."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    child_env = dict(os.environ if env is None else env)
    child_env[OWNER_ENV] = owner
    with open(log_file, "ab") as log:
        log.write(f"# p4ina: {' '.join(argv)}\n".encode())
        log.flush()
        try:
            popen = subprocess.Popen(
                list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=child_env,
                start_new_session=True,  # a Ctrl-C in the terminal reaches p4ina, which then stops switches in order
            )
        except OSError as exc:
            raise SwitchStartError(f"{name}: cannot run {argv[0]}: {exc.strerror or exc}") from exc
    if pid_file is not None:
        pid_file.parent.mkdir(parents=True, exist_ok=True)
        pid_file.write_text(f"{popen.pid}\n")
    return SwitchProcess(name, argv, log_file, pid_file, popen)


def wait_grpc_ready(process: SwitchProcess, address: str, timeout: float, *, tls: SwitchTls | None = None) -> None:
    """Return once `address` answers a P4Runtime Capabilities call; raise with the log tail if the process exits or
    the deadline passes. UNIMPLEMENTED also counts as an answer (old BMv2 builds lack Capabilities)."""
    import grpc
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

    deadline = time.monotonic() + timeout
    last_error = "no answer"
    while True:
        if not process.alive():
            raise SwitchStartError(_exit_message(process, f"exited with status {process.returncode} before its "
                                                          f"gRPC server at {address} answered"))
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SwitchStartError(_exit_message(process, f"gRPC server at {address} did not answer within "
                                                          f"{timeout:g} s ({last_error})"))
        channel = open_channel(address, tls)
        try:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
            stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=min(1.0, max(remaining, 0.05)))
            return
        except grpc.RpcError as exc:
            code = exc.code()
            if code == grpc.StatusCode.UNIMPLEMENTED:
                return
            last_error = f"{code.name}: {exc.details()}"
        finally:
            channel.close()
        time.sleep(0.05)


def _exit_message(process: SwitchProcess, what: str) -> str:
    tail = process.log_tail()
    where = f" (log: {process.log_file})"
    return f"switch {process.name} {what}{where}" + (f"\n--- log tail ---\n{tail}" if tail else "")
