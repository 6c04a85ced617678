"""Run `p4ina COMMAND ...` in a fresh process without paying Python's start-up and p4ina's imports each time.

The corpus tests (tests/target/test_programs.py, test_conformance.py) run `p4ina compile` and `p4ina switch` a few
hundred times; each run spent about a second of CPU importing the compiler, the switch, Scapy and every command
module (`p4ina` loads all of them by design, docs/testing.md) before doing some milliseconds of work. Here one
server process imports all that once and forks a child per command. The child is a new process like the
installed command's: its own working directory, environment, stdout and stderr files and exit status, and it ends
through the interpreter's normal shutdown (`sys.exit(main())`, as the console script does: atexit hooks run,
non-daemon threads are joined, streams flushed). Nothing of one command survives into the next.

The installed command itself (the console script and `python -m p4ina`) is still run as a real subprocess by
`test_programs.test_program_through_the_installed_command`, test_switch_filemode_cli.py and the unit CLI tests.

Protocol (server's stdin / a dedicated pipe): one JSON request per line {argv, cwd, env, stdout, stderr}; the server
answers {"pid": N} once the child exists, then {"status": wait status} when it has ended.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

# What every `p4ina compile` / `p4ina switch` run imports: loaded once in the server.
PRELOAD = ("p4ina.cli", "p4switch.compiler", "p4switch.compile_cli", "p4switch.switch_cli",
           "p4switch.switch.filemode", "p4switch.switch.pipeline", "p4switch.device_loader", "scapy.utils")


# ------------------------------------------------------------------------------------------------ server side


def _serve(requests: IO[str], replies: IO[str]) -> dict[str, Any] | None:
    """The server loop; returns a request only in a freshly forked child (None when the client closed the pipe)."""
    while True:
        line = requests.readline()
        if not line:
            return None
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            return request
        replies.write(json.dumps({"pid": pid}) + "\n")
        replies.flush()
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"status": status}) + "\n")
        replies.flush()


def _become(request: dict[str, Any], requests: IO[str], replies: IO[str]) -> None:
    """In the child: the request's directory, environment and output files, then nothing of the server's pipes."""
    requests.close()
    replies.close()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, fd)
        os.close(out)
    sys.argv = list(request["argv"])


def _server_main() -> None:
    import importlib

    del sys.path[0]  # this file's folder: the command sees the packages as the installed script does
    for module in PRELOAD:
        importlib.import_module(module)
    from p4ina.cli import build_parser

    build_parser()  # imports every command module, as each `p4ina` run does
    # the protocol uses the original stdin/stdout; fds 0-2 are then the child's to redirect
    requests = os.fdopen(os.dup(0), "r")
    replies = os.fdopen(os.dup(1), "w")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    request = _serve(requests, replies)
    if request is None:
        return
    _become(request, requests, replies)
    from p4ina.cli import main

    sys.exit(main(sys.argv[1:]))  # what the `p4ina` console script does


# ------------------------------------------------------------------------------------------------ client side


class ForkServer:
    """A client of one server process; `run` is a `subprocess.run(capture_output=True, text=True)` for `p4ina`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, bufsize=1)
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        ready = self._reply(timeout=120)
        if not ready.get("ready"):
            raise RuntimeError(f"the p4ina fork server did not start: {ready}")

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put("")  # the server exited

    def _reply(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None
        if not line:
            self._lines.put("")
            raise RuntimeError(f"the p4ina fork server exited (status {self._proc.poll()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def run(self, argv: Sequence[str], *, cwd: str | os.PathLike[str] | None = None, timeout: float = 120,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run `p4ina ARGV...` (argv[0] must be "p4ina"): its exit code, stdout and stderr."""
        if Path(argv[0]).name != "p4ina":
            raise ValueError(f"the fork server runs p4ina commands only, not {argv[0]}")
        with self._lock, tempfile.TemporaryDirectory(prefix="p4ina-fork-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            request = {"argv": ["p4ina", *argv[1:]], "cwd": str(Path(cwd or os.getcwd()).resolve()),
                       "env": dict(os.environ if env is None else env), "stdout": str(out), "stderr": str(err)}
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            pid: int | None = None
            try:
                pid = int(self._reply(timeout=30)["pid"])
                status = int(self._reply(timeout=timeout)["status"])
            except TimeoutError:
                self._abandon(pid)
                raise subprocess.TimeoutExpired(list(argv), timeout) from None
            except BaseException:  # pytest-timeout, Ctrl-C: the next request must not read this one's replies
                self._abandon(pid)
                raise
            code = os.waitstatus_to_exitcode(status)
            return subprocess.CompletedProcess(list(argv), code, out.read_text(errors="replace"),
                                               err.read_text(errors="replace"))

    def _abandon(self, pid: int | None) -> None:
        """Kill the child of an interrupted request and read its replies; if that fails, stop the server (the next
        `p4ina_run` starts a new one)."""
        try:
            if pid is None:
                pid = int(self._reply(timeout=30)["pid"])
            os.kill(pid, 9)  # only the child this request forked
            self._reply(timeout=30)
        except BaseException:
            self._proc.kill()
            self._proc.wait()
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, 9)

    def alive(self) -> bool:
        return self._proc.poll() is None

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


_server: ForkServer | None = None
_server_lock = threading.Lock()


def p4ina_run(argv: Sequence[str], *, cwd: str | os.PathLike[str] | None = None, timeout: float = 120
              ) -> subprocess.CompletedProcess[str]:
    """`p4ina ARGV...` through this session's fork server (started on first use, stopped at exit)."""
    global _server
    with _server_lock:
        if _server is None or not _server.alive():
            _server = ForkServer()
            atexit.register(_server.close)
        server = _server
    return server.run(argv, cwd=cwd, timeout=timeout)


if __name__ == "__main__":
    _server_main()
