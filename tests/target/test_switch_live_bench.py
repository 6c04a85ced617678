"""The live half of `bench/switch_pps.py` (`bench/_switch_live.py`), run small: the closed-loop generator in a
namespace the harness creates and removes must count exactly the frames the switch forwards with either sink, and
must end (not hang) when the switch forwards nothing back. Expected counts come from the frames sent and the
program's constant routes, not from the harness's own output."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench._switch_live import IN_FLIGHT, SINKS, forward
from bench.switch_pps import L3_PROGRAM, l3_frames
from p4switch.compiler import compile_file

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def program() -> tuple[Any, bytes]:
    compiled = compile_file(Path(L3_PROGRAM))
    return compiled.p4info, compiled.device_config_bytes()


def to_port(port: int) -> list[bytes]:
    """Frames the program's const entries route to `port` (10.0.1.0/24 -> 1, 10.0.2.0/24 -> 2; byte 32 is the
    third octet of the IPv4 destination)."""
    return [f for f in l3_frames(64) if f[32] == port]


@pytest.mark.parametrize("sink", SINKS)
def test_every_forwarded_frame_is_counted_once(program: tuple[Any, bytes], sink: str) -> None:
    n = IN_FLIGHT + 300  # more than one window: the generator must top it up as frames come back
    result = forward(program, to_port(2), n, "ring", sink)
    assert result["sink"] == sink
    assert result["offered"] == result["received"] == n and result["all_arrived"]
    assert result["ports"][1]["rx"] == n and result["ports"][2]["tx"] == n  # in on port 1, out on port 2
    assert result["pps"] > 0 and result["cpu_us_per_packet"] > 0 and result["generator_cpu_us_per_packet"] > 0


def test_nothing_back_ends_the_run_with_what_arrived(program: tuple[Any, bytes]) -> None:
    # routed back out of port 1, the generator's own sending side: nothing reaches the far veth it watches
    result = forward(program, to_port(1), 100, "ring")
    assert result["received"] == 0 and not result["all_arrived"]
    assert result["ports"][1]["tx"] == result["offered"] == 100


def test_the_namespace_is_gone_afterwards(program: tuple[Any, bytes]) -> None:
    forward(program, to_port(2), 10, "ring")
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert f"p4b-{os.getpid()}" not in names.split()  # the harness names its namespace after this process


def test_paired_chunks_alternate_file_mode_and_live(program: tuple[Any, bytes]) -> None:
    """`paired` (what `live_vs_file_paired` runs): every live chunk gets all its frames through one switch and one
    generator kept running, and every file-mode chunk is the caller's, called once per live chunk (plus the
    warm-up) with the chunk's size."""
    from bench._switch_live import paired

    calls: list[int] = []

    def file_chunk(n: int) -> float:
        calls.append(n)
        return 0.001 * n

    result = paired(program, to_port(2), file_chunk, 300, 3)
    assert calls == [300, 300, 300, 300]
    assert "error" not in result and result["chunks"] == 3
    assert result["file_cpu_us_per_packet"] == 1000.0  # 1 ms a packet, as file_chunk said
    assert result["live_cpu_us_per_packet"] > 0 and result["generator_cpu_us_per_packet"] > 0


def test_paired_reports_lost_frames(program: tuple[Any, bytes]) -> None:
    from bench._switch_live import paired

    result = paired(program, to_port(1), lambda n: 0.0, 50, 2)  # routed back out of port 1: nothing arrives
    assert result["error"] == "frames lost on the live path" and result["chunk"]["received"] == 0


def test_wide_live_vs_file_sends_every_aggregation_packet_out_of_its_port() -> None:
    """`wide_live_vs_file` (issue 17's live rows): aggregate_wide through file mode and a live switch on five veth
    pairs, alternated. The program (bench/_wide.py) sends worker w's contribution out of port w and the one that
    completes a slot (the 4th of a round, worker 3) out of port 4, so over whole rounds ports 0, 1, 2 and 4 each
    send a quarter of the live packets and port 3 none; every chunk must get all its frames through."""
    from bench.switch_pps import wide_live_vs_file

    chunk, chunks = 40, 2
    result = wide_live_vs_file(32, chunk, chunks)
    assert "error" not in result, result
    live_total = chunk * (chunks + 1)  # the warm-up chunk included
    assert result["ports_tx"] == {0: live_total // 4, 1: live_total // 4, 2: live_total // 4, 3: 0,
                                  4: live_total // 4}
    assert result["frame_bytes"] == 14 + 20 + 8 + 8 + 4 * 32
    assert result["live_elements_per_cpu_s"] == round(32 / result["live_cpu_us_per_packet"] * 1e6, 1)
    assert result["file_cpu_us_per_packet"] > 0 and 0 < result["cpu_ratio"]
