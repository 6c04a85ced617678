"""Host agent: the data-parallel digits example (4 DDP ranks) with gradients summed in-network by the embedded switch
and over the host ring, against single-process training: accuracy and time."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from bench.common import unavailable as _switch_unavailable
from bench.hostagent_allreduce import POOL, start_switch_with_job
from hostagent.train_digits import TrainConfig
from hostagent.train_digits import run as train
from hostagent.tunnel import FrameTunnel

N = 4
JOB = 1
UDP_BASE = 44000


def unavailable() -> str | None:
    try:
        import sklearn  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        return f"needs torch and scikit-learn ({exc.name} missing): pip install 'p4ina[torch]'"
    return _switch_unavailable()


def run(quick: bool) -> dict[str, Any]:
    epochs = 4 if quick else 40
    switch = start_switch_with_job(job=JOB, n=N, pool=POOL, udp_base=UDP_BASE)
    tunnel = FrameTunnel(switch)
    try:
        host, port = tunnel.address
        innet = train(TrainConfig(workers=N, epochs=epochs, backend="tunnel", tunnel=f"{host}:{port}", job=JOB,
                                  first_port=1, udp_base=UDP_BASE, pool=POOL))
    finally:
        tunnel.close()
        switch.stop()
    ring = train(TrainConfig(workers=N, epochs=epochs, backend="ring"))
    return {
        "in_network": asdict(innet),
        "ring": asdict(ring),
        "summary": {
            "epochs": epochs,
            "single_acc": round(innet.single_accuracy, 4),
            "innet_acc": round(innet.parallel_accuracy, 4),
            "ring_acc": round(ring.parallel_accuracy, 4),
            "innet_s": innet.parallel_seconds,
            "ring_s": ring.parallel_seconds,
        },
    }
