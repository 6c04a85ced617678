"""Clean-up removes exactly what a run recorded and still owns, never a process that is not marked as ours."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from p4fabric.cleanup import ExitHooks, RunState, clean_leftovers, pid_alive, process_owner

from p4ina.targets.process import OWNER_ENV

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _spawn(procs: list[subprocess.Popen[bytes]], owner: str | None) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.pop(OWNER_ENV, None)
    if owner is not None:
        env[OWNER_ENV] = owner
    proc = subprocess.Popen(SLEEPER, env=env)
    procs.append(proc)
    return proc


def _wait_marker(pid: int) -> None:
    """Wait until the child has exec'd the sleeper (before that, /proc shows the parent's environment)."""
    deadline = time.monotonic() + 10
    while b"sleep(60)" not in Path(f"/proc/{pid}/cmdline").read_bytes() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_cleanup_kills_only_marked_processes(tmp_path: Path, children: list[subprocess.Popen[bytes]]) -> None:
    run = RunState(root=tmp_path).create()
    ours = _spawn(children, run.run_id)
    stranger = _spawn(children, None)
    other_run = _spawn(children, "p4ina-someone-else")
    for proc in (ours, stranger, other_run):
        _wait_marker(proc.pid)
        run.record_pid(f"p{proc.pid}", proc.pid)
    assert process_owner(ours.pid) == run.run_id
    report = run.cleanup()
    ours.wait(timeout=10)
    assert report.killed == [ours.pid]
    assert stranger.poll() is None and other_run.poll() is None
    assert not run.dir.exists()


def test_cleanup_ignores_missing_interfaces_and_dead_pids(tmp_path: Path) -> None:
    run = RunState(root=tmp_path).create()
    run.record_pid("gone", 2**22 + 12345)  # beyond pid_max on default kernels: never alive
    run.record_interfaces(["p4ina-no-such-if"])
    report = run.cleanup()
    assert report.killed == [] and report.interfaces == []


def test_clean_leftovers_skips_live_runs_unless_forced(tmp_path: Path,
                                                       children: list[subprocess.Popen[bytes]]) -> None:
    live = RunState("p4ina-live-1", tmp_path).create()  # owner.pid is this test process: alive
    stale = RunState("p4ina-stale-1", tmp_path).create()
    (stale.dir / "owner.pid").write_text(f"{2**22 + 4242}\n")
    worker = _spawn(children, stale.run_id)
    _wait_marker(worker.pid)
    stale.record_pid("worker", worker.pid)
    (tmp_path / "not-ours").mkdir()

    # this process owns `live`, which clean_leftovers never skips for its own PID; fake another live owner
    (live.dir / "owner.pid").write_text(f"{os.getppid()}\n")
    reports = {r.run_id: r for r in clean_leftovers(tmp_path)}
    assert set(reports) == {"p4ina-live-1", "p4ina-stale-1"}
    assert "still running" in reports["p4ina-live-1"].skipped
    assert reports["p4ina-stale-1"].killed == [worker.pid]
    worker.wait(timeout=10)
    assert live.dir.exists() and not stale.dir.exists() and (tmp_path / "not-ours").exists()
    forced = clean_leftovers(tmp_path, force=True)
    assert [r.run_id for r in forced] == ["p4ina-live-1"] and not live.dir.exists()


def test_run_ids_have_the_prefix(tmp_path: Path) -> None:
    assert RunState(root=tmp_path).run_id.startswith("p4ina-")
    with pytest.raises(ValueError):
        RunState("mine", tmp_path)


def test_exit_hooks_run_once_last_first() -> None:
    calls: list[str] = []
    hooks = ExitHooks()
    hooks.add(lambda: calls.append("first"))
    hooks.add(lambda: 1 / 0)  # a failing hook does not stop the others
    hooks.add(lambda: calls.append("last"))
    hooks.run()
    hooks.run()
    assert calls == ["last", "first"]


def test_exit_hooks_run_on_sigterm(tmp_path: Path) -> None:
    marker = tmp_path / "cleaned"
    script = (
        "import os, signal, time\n"
        "from p4fabric.cleanup import ExitHooks\n"
        f"h = ExitHooks().install(); h.add(lambda: open({str(marker)!r}, 'w').write('x'))\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    proc.terminate()
    assert proc.wait(timeout=10) == 128 + 15
    assert marker.read_text() == "x"
    assert not pid_alive(proc.pid)
