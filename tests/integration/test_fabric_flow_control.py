"""Issue 18 on a lossless shaped fabric: the workers' flow control and loss detection end to end.

`p4ina run` on `leafspine,2,1,4` (8 workers) with every link shaped to 2 Mbit/s and 64 values per packet: the
issue's command and build, with which it measured 3,410 resends in 24 steps (every one a timer firing on a chunk
that was not lost). In-network int32 must be exact, and as no loss is injected and links are FIFO, no chunk may be
declared lost by a later RESULT; every resend there is must be a probe or a timeout, and counted as one. How many
resends there are depends on how the 2 cores are shared (0.39% in one run, 2.2% in another on an idle machine), so
the issue's <= 1% is measured by `p4ina bench` (bench.fabric_runs.rates reports the resent fraction per mode), not
asserted here: docs/performance.md, "Link rates, flow control and loss"."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_fabric_runs import _mode, p4ina_run

pytestmark = [pytest.mark.root, pytest.mark.integration, pytest.mark.slow]


@pytest.mark.timeout(1800)
def test_a_shaped_lossless_fabric_loses_nothing_and_accounts_every_resend(tmp_path: Path) -> None:
    report = p4ina_run(tmp_path, "--topo", "leafspine,2,1,4", "--size", "65536", "--count", "2", "--bw", "2",
                       "--values", "64", timeout=1700)
    assert report["exact"] is True, report["errors"] or report["_stderr"][-2000:]
    assert report["_returncode"] == 0
    innet = _mode(report, "in-network")
    assert innet["steps"] == 2
    stats = [r["stats"] for r in report["worker_results"] if r["mode"] == "in-network"]
    assert len(stats) == 8
    sent = sum(s["packets_sent"] for s in stats)
    resent = sum(s["retransmissions"] for s in stats)
    assert innet["retransmissions"] == resent
    assert sent >= 8 * 2 * (65536 // 64), sent  # every chunk of every step was sent at least once
    assert sum(s["fast_retransmissions"] for s in stats) == 0  # FIFO and lossless: nothing is ever overtaken
    timers = sum(s["probes"] + s["timer_retransmissions"] for s in stats)
    corrupt = sum(s["checksum_failures"] for s in stats)  # a RESULT failing its checksum is asked for again at once
    assert timers <= resent <= timers + corrupt, f"{resent} resends: {timers} probes or timeouts, {corrupt} corrupt"
