"""The at-scale model's closed forms say what they claim, and calibration recovers known parameters."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

import pytest

from bench.scale import cli as model_cli
from bench.scale.model import (
    ALGORITHMS,
    TOPOLOGIES,
    WIRE_OVERHEAD_BYTES,
    Measurement,
    Params,
    allreduce_time,
    busiest_switch_packets,
    calibrate,
    fabric_for,
    predict,
)

NO_LATENCY = Params(host_overhead_s=0.0, switch_latency_s=0.0)


@pytest.mark.parametrize("hosts", [4, 64, 1000])
def test_ring_moves_two_n_minus_one_over_n_of_the_message(hosts: int) -> None:
    size = 64 * 2**20
    t = allreduce_time("ring", "fattree", hosts, size, NO_LATENCY)
    chunk = size / hosts
    packets = -(-chunk // NO_LATENCY.payload_bytes)
    wire = chunk + packets * WIRE_OVERHEAD_BYTES
    assert t == pytest.approx(2 * (hosts - 1) * wire / NO_LATENCY.link_bytes_per_s, rel=1e-9)


def test_in_network_sends_the_message_once_at_line_rate() -> None:
    size = 64 * 2**20
    t = allreduce_time("innet", "leafspine", 64, size, NO_LATENCY)
    packets = size / NO_LATENCY.payload_bytes
    line = packets * (NO_LATENCY.payload_bytes + WIRE_OVERHEAD_BYTES) / NO_LATENCY.link_bytes_per_s
    assert t == pytest.approx(line, rel=1e-3)


@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_in_network_beats_the_ring_at_scale(topology: str) -> None:
    p = Params()
    for n in (1024, 100_000):
        assert allreduce_time("innet", topology, n, 4 * 2**20, p) < allreduce_time("ring", topology, n, 4 * 2**20, p)


def test_ring_latency_grows_linearly_with_hosts_for_small_messages() -> None:
    p = Params()
    t1, t2 = (allreduce_time("ring", "fattree", n, 1024, p) for n in (1000, 4000))
    assert 3.5 < t2 / t1 < 4.5


def test_random_rank_order_pays_for_oversubscription() -> None:
    aware = Params(oversubscription=4.0, topology_aware_ranks=True)
    random_order = replace(aware, topology_aware_ranks=False)
    size = 64 * 2**20
    assert allreduce_time("ring", "leafspine", 256, size, random_order) > 2 * allreduce_time(
        "ring", "leafspine", 256, size, aware
    )


def test_switch_rate_and_loss_slow_in_network_down() -> None:
    base = Params()
    size = 16 * 2**20
    t = allreduce_time("innet", "fattree", 512, size, base)
    assert allreduce_time("innet", "fattree", 512, size, replace(base, switch_agg_pps=1e5)) > 10 * t
    assert allreduce_time("innet", "fattree", 512, size, replace(base, loss_rate=0.01)) > t


def test_tree_depth_follows_the_fabric() -> None:
    p = Params()
    assert fabric_for("fattree", 2, p).tree_depth == 1
    assert fabric_for("fattree", 16, p).tree_depth == 3  # k=4: 2 per edge, 4 per pod
    assert fabric_for("leafspine", 32, p).tree_depth == 1
    assert fabric_for("leafspine", 33, p).tree_depth == 2
    assert fabric_for("leafspine", 32 * 64 + 1, p).tree_depth == 3


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown topology"):
        fabric_for("hypercube", 8, Params())
    with pytest.raises(ValueError, match="at least 2"):
        fabric_for("fattree", 1, Params())
    with pytest.raises(ValueError, match="unknown algorithm"):
        allreduce_time("butterfly", "fattree", 8, 1e6, Params())


def test_calibration_recovers_parameters_from_their_own_predictions() -> None:
    truth = Params(link_gbps=1.0, host_overhead_s=3e-4, switch_latency_s=2e-5, switch_agg_pps=12_000.0)
    runs = [
        Measurement(alg, "leafspine", n, size, allreduce_time(alg, "leafspine", n, size, truth))
        for alg in ("innet", "ring") for n in (2, 4, 8) for size in (4096.0, 262144.0, 4194304.0)
    ]
    start = Params(link_gbps=1.0, host_overhead_s=1e-6, switch_latency_s=1e-6, switch_agg_pps=1e6)
    cal = calibrate(runs, start)
    assert cal.mean_abs_rel_error < 0.05
    held_out = Measurement("innet", "leafspine", 16, 1048576.0, allreduce_time("innet", "leafspine", 16, 1048576.0,
                                                                              truth))
    predicted = allreduce_time("innet", "leafspine", 16, 1048576.0, cal.params)
    assert predicted == pytest.approx(held_out.seconds, rel=0.1)


def _model_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="p4ina")
    model_cli.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return int(args.handler(args))


def test_cli_writes_every_combination(tmp_path, capsys) -> None:
    assert _model_command(["model", "--hosts", "1024,2048", "--sizes", "1048576", "--out", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["rows"]) == 2 * len(TOPOLOGIES) * len(ALGORITHMS)
    assert (tmp_path / "model.png").stat().st_size > 0
    assert json.loads((tmp_path / "model.json").read_text())["rows"] == out["rows"]


def test_software_switch_shares_its_rate_among_the_packets_of_a_chunk() -> None:
    # 2 leaves under one spine: a leaf with c workers handles c DATA + 1 up + 1 RESULT in + c RESULT copies.
    slow = Params(host_overhead_s=0.0, switch_latency_s=0.0, switch_agg_pps=1000.0, window_packets=10**6)
    assert busiest_switch_packets(fabric_for("leafspine", 2, replace(slow, hosts_per_leaf=1)), slow) == 4
    assert busiest_switch_packets(fabric_for("leafspine", 8, replace(slow, hosts_per_leaf=4)), slow) == 10
    assert busiest_switch_packets(fabric_for("leafspine", 8, slow), slow) == 16  # one leaf: 8 in, 8 out
    size = 256 * 1024.0
    two = predict(Measurement("innet", "leafspine", 2, size, 1.0, hosts_per_leaf=1), slow)
    eight = predict(Measurement("innet", "leafspine", 8, size, 1.0, hosts_per_leaf=4), slow)
    assert two == pytest.approx(256 * 4 / 1000.0, rel=1e-3)
    assert eight / two == pytest.approx(10 / 4, rel=1e-3)


def test_hardware_switch_at_line_rate_ignores_the_packet_work() -> None:
    # switch_agg_pps=None is a hardware pipeline: the time no longer depends on how many children a switch has.
    p = replace(NO_LATENCY, hosts_per_leaf=1)
    wide = replace(NO_LATENCY, hosts_per_leaf=64)
    size = 64 * 2**20
    assert allreduce_time("innet", "leafspine", 64, size, p) == pytest.approx(
        allreduce_time("innet", "leafspine", 64, size, wide), rel=1e-3)


def test_calibration_recovers_a_software_switch_from_two_worker_runs() -> None:
    truth = Params(link_gbps=10.0, payload_bytes=256, window_packets=64, host_overhead_s=2e-4,
                   switch_latency_s=5e-5, switch_agg_pps=6000.0)
    runs = [Measurement(alg, "leafspine", 2, size, predict(Measurement(alg, "leafspine", 2, size, 1.0,
                                                                       hosts_per_leaf=1), truth), hosts_per_leaf=1)
            for alg in ("innet", "ring") for size in (16384.0, 131072.0)]
    cal = calibrate(runs, replace(truth, host_overhead_s=1e-6, switch_latency_s=1e-6, switch_agg_pps=1e6))
    assert cal.mean_abs_rel_error < 0.05
    eight = Measurement("innet", "leafspine", 8, 131072.0, 1.0, hosts_per_leaf=4)
    assert predict(eight, cal.params) == pytest.approx(predict(eight, truth), rel=0.1)


def _bench_points(truth: Params, sizes: tuple[float, ...]) -> list[dict[str, float | str]]:
    """Calibration rows as the fabric benchmark writes them, timed by the model itself with `truth`."""
    points: list[dict[str, float | str]] = []
    for workers in (2, 4, 8):
        for alg in ("innet", "ring"):
            for size in sizes:
                m = Measurement(alg, "leafspine", workers, size, 1.0, hosts_per_leaf=workers // 2)
                points.append({"algorithm": alg, "workers": workers, "bytes": size, "measured_s": predict(m, truth)})
    return points


def test_cli_calibrates_a_software_fabric_from_the_fabric_benchmark_json(tmp_path, capsys) -> None:
    truth = Params(link_gbps=10.0, payload_bytes=256, window_packets=64, cores=2.0, switch_op_cpu_s=7e-5,
                   host_op_cpu_s=2e-4, wake_s=1e-4)
    points = _bench_points(truth, (16384.0, 131072.0))
    bench_json = tmp_path / "fabric.json"
    bench_json.write_text(json.dumps({"calibration": {"points": points}}))
    assert _model_command(["model", "--hosts", "4", "--sizes", "65536", "--topology", "leafspine", "--cores", "2",
                           "--link-gbps", "10", "--payload-bytes", "256", "--window-packets", "64",
                           "--calibrate", str(bench_json), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["calibration"]["fitted"]) == {"switch_op_cpu_s", "host_op_cpu_s", "wake_s"}
    assert out["calibration"]["mean_abs_rel_error"] < 0.02
    assert out["calibration"]["fitted"]["switch_op_cpu_s"] == pytest.approx(7e-5, rel=0.1)


def test_cli_refuses_a_json_that_holds_no_points(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rows": []}))
    with pytest.raises(SystemExit, match="cannot read measurements"):
        _model_command(["model", "--calibrate", str(bad), "--hosts", "4", "--sizes", "1024"])


def test_cli_starts_from_the_emulation_settings_a_bench_result_records(tmp_path, capsys) -> None:
    truth = Params(link_gbps=10.0, payload_bytes=256, window_packets=32, cores=2.0, switch_op_cpu_s=5e-5,
                   host_op_cpu_s=1e-4, wake_s=1e-4)
    points = _bench_points(truth, (65536.0, 262144.0))
    base = {"link_gbps": 10.0, "payload_bytes": 256, "window_packets": 32, "cores": 2.0}
    bench_json = tmp_path / "fabric.json"
    bench_json.write_text(json.dumps({"calibration": {"points": points, "base_params": base}}))
    assert _model_command(["model", "--hosts", "4", "--sizes", "65536", "--topology", "leafspine",
                           "--calibrate", str(bench_json), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["params"]["cores"] == 2.0 and out["params"]["payload_bytes"] == 256
    assert out["calibration"]["mean_abs_rel_error"] < 0.02
