"""Issue 6: the data-parallel digits example with its gradients summed by p4ina.p4 on the embedded switch.

Four DDP processes reach the switch (in this process) through the frame tunnel; the DDP hook all-reduces every
gradient bucket in-network. The short run must match single-process accuracy within 1 percentage point."""

from __future__ import annotations

import pytest
from aggnet import AggSwitch, JobOnSwitch, Neighbor, compiled_program, install_job

from hostagent.train_digits import TrainConfig, run
from hostagent.tunnel import FrameTunnel

N = 4


@pytest.mark.slow
def test_training_through_the_switch_matches_single_process(capsys: pytest.CaptureFixture[str]) -> None:
    compiled_program()
    sw = AggSwitch("s1", 0, lambda _name, _port, _frame: None)
    tunnel = FrameTunnel(sw.switch)
    try:
        cfg = TrainConfig(workers=N, epochs=4, backend="tunnel", tunnel=f"{tunnel.address[0]}:{tunnel.address[1]}",
                          job=3, first_port=1, udp_base=42000, pool=32, scale=0)
        children = {cfg.first_port + r: (r, Neighbor(0x02_00_00_00_01_00 + r, 0x0A_00_01_00 + r, cfg.udp_base + r))
                    for r in range(N)}
        install_job(sw, JobOnSwitch(job_id=cfg.job, job_idx=0, slot_count=cfg.pool, children=children, mcast_grp=1,
                                    scale=cfg.scale))
        result = run(cfg)
    finally:
        tunnel.close()
        sw.stop()
    assert result.single_accuracy > 0.9
    assert result.difference_pp <= 1.0
    with capsys.disabled():
        print(f"\n[hostagent] digits, 4 DDP workers through the switch, {cfg.epochs} epochs: "
              f"{result.parallel_accuracy:.4f} vs single {result.single_accuracy:.4f}, "
              f"{result.buckets_per_worker} buckets/worker, {result.parallel_seconds:.1f} s, "
              f"{result.retransmissions} retransmissions")
