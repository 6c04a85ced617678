"""Compile time of p4src/p4ina.p4 by values per packet: `p4ina compile -D AGG_VALUES=N` CPU seconds and peak memory.

Each build is one `p4ina compile` process (interpreter start-up included, as a user runs it), measured with the
child's own rusage (`os.wait4`): user + system CPU seconds and peak resident memory. The outputs' SHA-256 are
recorded too, so two runs (before and after a compiler change) can be checked byte for byte. Quick: 64, 256 and
1024 values; full: also 2048.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PROGRAM = REPO / "p4src" / "p4ina.p4"
QUICK_SIZES = (64, 256, 1024)
FULL_SIZES = (64, 256, 1024, 2048)


def compile_once(n: int, out_dir: Path) -> dict[str, Any]:
    """One `p4ina compile` of p4ina.p4 at `n` values into `out_dir`: CPU, wall time, peak memory, output digests."""
    cmd = [sys.executable, "-m", "p4ina", "compile", str(PROGRAM), "-D", f"AGG_VALUES={n}", "-o", str(out_dir)]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr is not None else ""
    if proc.stderr is not None:
        proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: tell Popen, so it does not wait again
    if proc.returncode != 0:
        raise RuntimeError(f"p4ina compile at {n} values failed ({proc.returncode}): {stderr.strip()[:400]}")
    digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out_dir.iterdir())}
    return {"values": n, "cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "wall_s": round(wall, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "outputs_sha256": digests}


def run(quick: bool) -> dict[str, Any]:
    sizes = QUICK_SIZES if quick else FULL_SIZES
    rows = []
    with tempfile.TemporaryDirectory(prefix="p4ina-compile-time-") as tmp:
        for n in sizes:
            rows.append(compile_once(n, Path(tmp) / str(n)))
    return {
        "program": str(PROGRAM.relative_to(REPO)),
        "method": "one `p4ina compile` process per size; CPU = the child's user + system seconds (os.wait4)",
        "load_average": list(os.getloadavg()),
        "runs": rows,
        "summary": {f"cpu_s_{r['values']}": r["cpu_s"] for r in rows},
    }


if __name__ == "__main__":  # python -m bench.compile_time [--full]: print the JSON
    import json

    print(json.dumps(run(quick="--full" not in sys.argv), indent=2))
