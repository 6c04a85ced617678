"""`p4ina run --values N` end to end on Mininet: p4ina.p4 built for 512 values per packet, int32 packets of 2,114
bytes (more than a 1500-byte MTU carries) on 9000-byte-MTU links, ring and in-network over the same links, exact."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_fabric_runs import _mode, p4ina_run

from hostagent import protocol as proto

pytestmark = [pytest.mark.root, pytest.mark.integration, pytest.mark.slow]


@pytest.mark.timeout(1800)
def test_512_values_per_packet_on_jumbo_links_exact(tmp_path: Path) -> None:
    report = p4ina_run(tmp_path, "--topo", "leafspine,2,1,2", "--size", "20000", "--count", "2", "--values", "512",
                       "--mode", "ring", "--mode", "innet", timeout=1700)
    assert report["exact"] is True, report["errors"] or report["_stderr"][-2000:]
    assert report["_returncode"] == 0
    assert report["job"]["values"] == 512 and report["job"]["mtu"] == 9000
    assert _mode(report, "ring")["steps"] == _mode(report, "in-network")["steps"] == 2
    frame = proto.frame_len(proto.FMT_INT32, 512)
    assert frame == 14 + 20 + 8 + 24 + 512 * 4 and frame - 14 > 1500
    for r in report["worker_results"]:
        if r["mode"] == "in-network":
            stats = r["stats"]
            # every DATA frame a worker sent was a whole 512-value frame, and all of them were answered exactly
            assert stats["packets_sent"] > 0 and stats["bytes_sent"] == stats["packets_sent"] * frame
            assert stats["checksum_failures"] == 0
