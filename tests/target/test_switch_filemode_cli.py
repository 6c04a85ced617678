"""`p4ina switch --use-files` end to end through the command line: pcap files in and out, entries, capture,
and one-line errors (never a traceback). Uses a hand-written pipeline that follows the code generator's
contract, so it runs whether or not the compiler is present."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "switch"))

from switch_cli_runner import run_switch, switch_command
from switch_ctlprog import ctl, device_config, observe, p4info_text

from p4switch.switch.ports import PcapWriter, read_pcap

ENTRIES = """
updates { type: INSERT entity { packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 1
  replicas { egress_port: 1 instance: 7 } replicas { egress_port: 2 instance: 8 } } } } }
"""


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "prog.json").write_bytes(device_config())
    (tmp_path / "prog.p4info.txtpb").write_text(p4info_text())  # the program has no tables
    return tmp_path


def write_input(path: Path, frames: list[bytes]) -> None:
    w = PcapWriter(path)
    for i, f in enumerate(frames):
        w.write(f, timestamp=float(i))
    w.close()


def outputs(d: Path, ports: range = range(4)) -> dict[int, list[bytes]]:
    return {p: [f for _, f in read_pcap(d / f"p{p}_out.pcap")] for p in ports}


def assert_one_line_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("p4ina switch: error:") and fragment in lines[0], result.stderr


def test_file_mode_processes_every_packet_and_writes_every_port(workdir: Path) -> None:
    frames = [ctl(port=1 + i % 3, payload=bytes([i])) for i in range(30)]
    write_input(workdir / "p0_in.pcap", frames)
    args = ["prog.json", "--use-files", "0"] + [f"-i{p}@p{p}" for p in range(4)]
    result = run_switch(args, workdir)
    assert result.returncode == 0, result.stderr
    out = outputs(workdir)
    assert out[0] == []  # attached port with no traffic: an empty (valid) pcap
    for port in (1, 2, 3):
        assert [f[-1] for f in out[port]] == [i for i in range(30) if 1 + i % 3 == port]
        assert all(observe(f)["egress_port"] == port for f in out[port])


def test_inputs_of_several_ports_merge_by_timestamp_and_empty_inputs_are_fine(workdir: Path) -> None:
    w0, w1 = PcapWriter(workdir / "p0_in.pcap"), PcapWriter(workdir / "p1_in.pcap")
    for i in range(6):  # port 0 at t = 0, 2, 4 ...; port 1 at t = 1, 3, 5 ...
        (w0 if i % 2 == 0 else w1).write(ctl(port=2, payload=bytes([i])), timestamp=float(i))
    w0.close()
    w1.close()
    PcapWriter(workdir / "p3_in.pcap").close()  # header only
    result = run_switch(["prog.json", "--use-files", "0"] + [f"-i{p}@p{p}" for p in range(4)], workdir)
    assert result.returncode == 0, result.stderr
    out = outputs(workdir)[2]
    assert [f[-1] for f in out] == list(range(6))
    assert [observe(f)["ingress_port"] for f in out] == [0, 1, 0, 1, 0, 1]
    assert outputs(workdir)[3] == []


def test_file_mode_entries_and_capture(workdir: Path) -> None:
    write_input(workdir / "p0_in.pcap", [ctl(mcast=1)])
    (workdir / "entries.txtpb").write_text(ENTRIES)
    (workdir / "cap").mkdir()
    args = ["prog.json", "--use-files", "0", "-i", "0@p0", "-i", "1@p1", "-i", "2@p2",
            "--entries", "entries.txtpb", "--pcap", "cap"]
    result = run_switch(args, workdir)
    assert result.returncode == 0, result.stderr
    out = outputs(workdir, range(3))
    assert [observe(f)["egress_rid"] for f in out[1]] == [7]
    assert [observe(f)["egress_rid"] for f in out[2]] == [8]
    assert [f for _, f in read_pcap(workdir / "cap" / "p0_in.pcap")] == [ctl(mcast=1)]
    assert [f for _, f in read_pcap(workdir / "cap" / "p1_out.pcap")] == out[1]


def test_file_mode_impairment_flag_is_seeded(workdir: Path) -> None:
    write_input(workdir / "p0_in.pcap", [ctl(port=1, payload=bytes([i])) for i in range(200)])
    args = ["prog.json", "--use-files", "0", "-i", "0@p0", "-i", "1@p1", "--impair", "1:out:loss=0.5,seed=3"]
    assert run_switch(args, workdir).returncode == 0
    first = outputs(workdir, range(2))[1]
    assert run_switch(args, workdir).returncode == 0
    assert outputs(workdir, range(2))[1] == first and 60 < len(first) < 140


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["missing.json", "--use-files", "0", "-i", "0@p0"], "cannot read device config missing.json"),
        (["prog.json", "--use-files", "0", "-i", "0@p0", "--p4info", "nope.txtpb"], "no P4Info at nope.txtpb"),
        (["prog.json", "--use-files", "0", "-i", "0@p0", "--files-dir", "nodir"], "pcap directory nodir does not exist"),
        (["prog.json", "--use-files", "0", "-i", "zero@p0"], "is not a number"),
        (["prog.json", "--use-files", "0", "-i", "0@p0", "-i", "0@p1"], "port 0 given twice"),
        (["prog.json", "--use-files", "0"], "at least one -i"),
        (["prog.json", "--use-files", "0", "-i", "0@p0", "--entries", "none.txtpb"], "cannot read entries file"),
        (["prog.json", "--use-files", "0", "-i", "0@p0", "--impair", "0:out:bogus=1"], "bad --impair"),
        (["prog.json", "-i", "1@p4ina-nosuch0"], "no such interface: p4ina-nosuch0"),
        (["bad.json", "--use-files", "0", "-i", "0@p0"], "device config"),
        (["--no-p4", "--use-files", "0", "-i", "0@p0"], "needs a DEVICE_CONFIG"),
        (["prog.json", "--use-files", "0", "-i", "0@p0", "--pcap", "nodir"], "pcap directory nodir does not exist"),
        (["prog.json", "--use-files", "0", "-i", "0@p0", "--pcap", "."], "would overwrite the input files"),
        (["prog.json", "--queue-rate", "1:5=10"], "priority 5 out of range"),
    ],
)
def test_errors_are_one_line(workdir: Path, args: list[str], fragment: str) -> None:
    (workdir / "bad.json").write_text(json.dumps({"format": "bmv2-json"}))
    (workdir / "bad.p4info.txtpb").write_text("")
    assert_one_line_error(run_switch(args, workdir), fragment)


def test_broken_pcap_input_is_one_line(workdir: Path) -> None:
    (workdir / "p0_in.pcap").write_bytes(b"this is not a pcap file")
    assert_one_line_error(run_switch(["prog.json", "--use-files", "0", "-i", "0@p0"], workdir), "cannot read pcap")


def test_bad_entries_name_the_update(workdir: Path) -> None:
    (workdir / "entries.txtpb").write_text(
        "updates { type: INSERT entity { table_entry { table_id: 1234 } } }"
    )
    result = run_switch(["prog.json", "--use-files", "0", "-i", "0@p0", "--entries", "entries.txtpb"], workdir)
    assert_one_line_error(result, "update 1")


def test_a_failing_packet_is_one_log_line_and_the_run_goes_on(workdir: Path) -> None:
    write_input(workdir / "p0_in.pcap", [ctl(port=1), ctl(port=1, flags=4), ctl(port=1)])
    result = run_switch(["prog.json", "--use-files", "0", "-i", "0@p0", "-i", "1@p1"], workdir)
    assert result.returncode == 0 and "Traceback" not in result.stderr
    (line,) = [ln for ln in result.stderr.splitlines() if "failed" in ln]
    assert "ingress failed on a packet from port 0: PacketProcessingError: assert failed at ctlprog.p4:" in line
    assert len(outputs(workdir, range(2))[1]) == 2


def test_live_switch_stops_cleanly_on_sigterm(workdir: Path) -> None:
    proc = subprocess.Popen(
        switch_command(["prog.json"]), cwd=workdir, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "running" in line, line
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
