"""Everything a p4ina run creates is recorded so it can always be removed: at exit, on signals, or later with
`p4ina run --clean` after a crash.

A run owns a state directory `<root>/<run id>/` (root: /run/p4ina as root, else a per-user temp folder) with the
PID of the p4ina process, one PID file per child process (switches, Mininet host shells, workers, controller) and
the list of interfaces it created. Every child gets `P4INA_OWNER=<run id>` in its environment; clean-up kills a
recorded PID only when that marker is still in /proc/PID/environ, so a PID the system has reused is never touched.
Run ids start with `p4ina-`, the recognisable prefix.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from p4ina.targets.process import OWNER_ENV

RUN_PREFIX = "p4ina-"


def state_root() -> Path:
    override = os.environ.get("P4INA_STATE_DIR")
    if override:
        return Path(override)
    if os.geteuid() == 0:
        return Path("/run/p4ina")
    return Path(tempfile.gettempdir()) / f"p4ina-state-{os.getuid()}"


def new_run_id() -> str:
    return f"{RUN_PREFIX}{os.getpid()}-{int(time.time())}"


def process_owner(pid: int) -> str | None:
    """The `P4INA_OWNER` marker in a live process's environment (None if absent, dead or unreadable)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    prefix = f"{OWNER_ENV}=".encode()
    for item in environ.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix):].decode(errors="replace")
    return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped) counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True


def interface_exists(name: str) -> bool:
    return Path(f"/sys/class/net/{name}").exists()


@dataclass
class CleanupReport:
    run_id: str
    killed: list[int] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    skipped: str = ""

    def summary(self) -> str:
        if self.skipped:
            return f"{self.run_id}: skipped ({self.skipped})"
        return (f"{self.run_id}: stopped {len(self.killed)} process(es), removed {len(self.interfaces)} "
                f"interface(s)")


class RunState:
    """The state directory of one run: what it created, and how to remove exactly that."""

    def __init__(self, run_id: str | None = None, root: Path | None = None) -> None:
        self.run_id = run_id or new_run_id()
        if not self.run_id.startswith(RUN_PREFIX):
            raise ValueError(f"run ids start with {RUN_PREFIX!r}")
        self.root = root or state_root()
        self.dir = self.root / self.run_id

    def create(self) -> RunState:
        (self.dir / "pids").mkdir(parents=True, exist_ok=True)
        (self.dir / "owner.pid").write_text(f"{os.getpid()}\n")
        return self

    @property
    def tag(self) -> str:
        """A short per-run prefix for the switch ports' interface names (`p` + 2 base-36 digits), so that two
        runs on one machine do not collide and leftovers are recognisable."""
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"
        value = zlib.crc32(self.run_id.encode()) % (36 * 36)
        return f"p{digits[value // 36]}{digits[value % 36]}"

    @property
    def owner_pid(self) -> int | None:
        try:
            return int((self.dir / "owner.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def pid_file(self, name: str) -> Path:
        return self.dir / "pids" / f"{name}.pid"

    def record_pid(self, name: str, pid: int) -> None:
        self.pid_file(name).write_text(f"{pid}\n")

    def record_interfaces(self, names: Iterable[str]) -> None:
        with open(self.dir / "interfaces", "a") as handle:
            for name in names:
                handle.write(f"{name}\n")

    def recorded_pids(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for path in sorted((self.dir / "pids").glob("*.pid")):
            with contextlib.suppress(OSError, ValueError):
                out[path.stem] = int(path.read_text().strip())
        return out

    def recorded_interfaces(self) -> list[str]:
        try:
            return list(dict.fromkeys(self.dir.joinpath("interfaces").read_text().split()))
        except OSError:
            return []

    def cleanup(self, grace: float = 3.0) -> CleanupReport:
        """Stop the recorded processes that are still ours, delete the recorded interfaces, drop the directory."""
        report = CleanupReport(self.run_id)
        owned = [pid for pid in self.recorded_pids().values()
                 if pid != os.getpid() and process_owner(pid) == self.run_id and pid_alive(pid)]
        for pid in owned:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while any(pid_alive(p) for p in owned) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in owned:
            if pid_alive(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        report.killed = owned
        for name in self.recorded_interfaces():
            if interface_exists(name):
                subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)
                if not interface_exists(name):
                    report.interfaces.append(name)
        self.remove()
        return report

    def remove(self) -> None:
        for path in sorted(self.dir.rglob("*"), reverse=True):
            with contextlib.suppress(OSError):
                path.rmdir() if path.is_dir() else path.unlink()
        with contextlib.suppress(OSError):
            self.dir.rmdir()


def leftover_runs(root: Path | None = None) -> list[RunState]:
    base = root or state_root()
    if not base.is_dir():
        return []
    return [RunState(p.name, base) for p in sorted(base.iterdir()) if p.is_dir() and p.name.startswith(RUN_PREFIX)]


def clean_leftovers(root: Path | None = None, *, force: bool = False) -> list[CleanupReport]:
    """Clean every recorded run whose p4ina process is gone (with `force`, also live ones)."""
    reports = []
    for run in leftover_runs(root):
        owner = run.owner_pid
        if not force and owner is not None and owner != os.getpid() and pid_alive(owner):
            reports.append(CleanupReport(run.run_id, skipped=f"p4ina process {owner} is still running; "
                                                             "use --force to clean it anyway"))
            continue
        reports.append(run.cleanup())
    return reports


class ExitHooks:
    """Clean-up callbacks that run exactly once, last registered first: at interpreter exit, on SIGTERM/SIGHUP,
    or when `run()` is called. SIGINT stays a KeyboardInterrupt so `finally` blocks unwind first."""

    def __init__(self) -> None:
        self._hooks: list[Callable[[], object]] = []
        self._done = False
        self._previous: dict[int, object] = {}

    def add(self, hook: Callable[[], object]) -> None:
        self._hooks.append(hook)

    def install(self) -> ExitHooks:
        atexit.register(self.run)
        if threading.current_thread() is threading.main_thread():  # Python delivers signals to the main thread
            for signum in (signal.SIGTERM, signal.SIGHUP):
                self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.run()
        raise SystemExit(128 + signum)

    def run(self) -> None:
        if self._done:
            return
        self._done = True
        while self._hooks:
            hook = self._hooks.pop()
            with contextlib.suppress(Exception):
                hook()
        for signum, handler in self._previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signum, handler)  # type: ignore[arg-type]
        atexit.unregister(self.run)
