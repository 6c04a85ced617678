"""The worker's reliability and checks, against a protocol model of one root switch (hostagent_switch_model):
self-clocking, retransmission under loss and duplication, forged and stale RESULTs, overflow redo, clear errors."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest
from hostagent_switch_model import SwitchModel

from hostagent import protocol as P
from hostagent import quantize as Q
from hostagent.codec import Endpoints
from hostagent.exceptions import AllReduceTimeoutError, ArrayTypeError, JobNotAdmittedError, ProtocolError
from hostagent.transport import SwitchPorts
from hostagent.worker import Worker

N = 4
JOB = 7


def _cluster(model: SwitchModel, n: int = N, **kw: object) -> list[Worker]:
    ports = SwitchPorts(model)
    opts: dict = {"pool_size": 8, "timeout": 0.02, "max_retries": 30}
    opts.update(kw)
    return [
        Worker(JOB, r, n_workers=n, transport=ports.attach(r + 1, 40000 + r), endpoints=Endpoints(udp_port=40000 + r), **opts)
        for r in range(n)
    ]


def _run_all(workers: list[Worker], fn: Callable[[Worker], object]) -> list:
    out: list = [None] * len(workers)
    errors: list[BaseException] = []

    def go(i: int) -> None:
        try:
            out[i] = fn(workers[i])
        except BaseException as exc:  # re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0]
    return out


def _reducing(data: list[np.ndarray]) -> Callable[[Worker], np.ndarray]:
    return lambda w: w.allreduce(data[w.rank])


def _model(**kw: object) -> SwitchModel:
    opts: dict = {"job": JOB, "n_children": N, "ports": [1, 2, 3, 4], "pool_size": 8}
    opts.update(kw)
    return SwitchModel(**opts)


@pytest.mark.parametrize("length", [1, 63, 64, 65, 1000])
def test_float32_within_bound_and_identical_on_all_workers(length: int) -> None:
    workers = _cluster(_model())
    rng = np.random.default_rng(length)
    data = [(rng.standard_normal(length) * 5).astype(np.float32) for _ in range(N)]
    out = _run_all(workers, lambda w: w.allreduce(data[w.rank]))
    exact = np.sum([d.astype(np.float64) for d in data], axis=0)
    e = workers[0].last_exponent
    assert e == max(Q.block_exponent(d) for d in data)
    assert all(o.dtype == np.float32 and o.shape == (length,) for o in out)
    assert all(np.array_equal(out[0], o) for o in out)
    assert np.all(np.abs(out[0] - exact) <= Q.int32_error_bound(e, N, exact, np.float32))


def test_int32_exact_under_loss_and_duplication_with_retransmissions() -> None:
    model = _model(loss=0.05, dup=0.02, seed=3)
    workers = _cluster(model)
    rng = np.random.default_rng(0)
    data = [rng.integers(-(2**28), 2**28, size=10_000, dtype=np.int32) for _ in range(N)]
    out = _run_all(workers, lambda w: w.allreduce(data[w.rank]))
    exact = np.sum(data, axis=0, dtype=np.int64).astype(np.int32)
    for o in out:
        assert o.dtype == np.int32 and np.array_equal(o, exact)
    assert sum(w.stats.retransmissions for w in workers) > 0
    assert model.counters["lost"] > 0 and model.counters["duplicated"] > 0
    assert model.counters["answered_retx"] > 0  # a lost RESULT came back from the slot's stored copy


def test_random_loss_is_resent_without_shrinking_the_window_for_each_loss() -> None:
    """1% loss per packet each way: a few chunks of a round trip are lost, fewer than a quarter of the window, so
    RACK resends them and the window keeps its size (docs/protocol.md, "Random loss is not congestion")."""
    model = _model(loss=0.01, seed=5)
    workers = _cluster(model)
    rng = np.random.default_rng(1)
    data = [rng.integers(-(2**20), 2**20, size=40_000, dtype=np.int32) for _ in range(N)]
    exact = np.sum(data, axis=0, dtype=np.int64).astype(np.int32)
    for _call in range(3):
        for o in _run_all(workers, lambda w: w.allreduce(data[w.rank])):
            assert np.array_equal(o, exact)
    tolerated = sum(w.stats.tolerated_losses for w in workers)
    assert model.counters["lost"] > 0 and tolerated > 0
    assert tolerated > sum(w.stats.loss_decreases for w in workers)


def test_repeated_calls_reuse_slots_and_predict_the_exponent() -> None:
    workers = _cluster(_model())
    rng = np.random.default_rng(5)
    for call in range(3):
        data = [rng.standard_normal((10, 30)) for _ in range(N)]  # float64, 2-D: 5 chunks over 8 slots
        out = _run_all(workers, _reducing(data))
        exact = np.sum(data, axis=0)
        assert out[0].shape == (10, 30) and out[0].dtype == np.float64
        e = workers[0].last_exponent
        assert e is not None
        assert np.all(np.abs(out[0] - exact) <= Q.int32_error_bound(e, N, exact, np.float64))
        assert workers[0].stats.exponent_rounds == 1, f"call {call}: only the first call needs an agreement round"


def test_overflow_after_a_wrong_prediction_is_redone_not_returned() -> None:
    workers = _cluster(_model())
    small = [np.full(100, 0.001 * (r + 1), dtype=np.float32) for r in range(N)]
    _run_all(workers, lambda w: w.allreduce(small[w.rank]))
    big = [np.full(100, 1000.0 * (r + 1), dtype=np.float32) for r in range(N)]  # same key, 2**20 times larger
    out = _run_all(workers, lambda w: w.allreduce(big[w.rank]))
    assert np.allclose(out[0], 10000.0, rtol=1e-6)
    assert all(w.stats.overflow_redos == 1 for w in workers)


def test_narrow_formats_within_bound() -> None:
    for fmt, bits in (("int16", 16), ("int8", 8)):
        workers = _cluster(_model(scale_exp=-4), fmt=fmt, scale_exp=-4)
        rng = np.random.default_rng(bits)
        data = [rng.standard_normal(640).astype(np.float32) for _ in range(N)]
        out = _run_all(workers, _reducing(data))
        exact = np.sum([d.astype(np.float64) for d in data], axis=0)
        e = workers[0].last_exponent
        assert e is not None
        assert np.all(np.abs(out[0] - exact) <= Q.narrow_error_bound(e, N, bits, exact, np.float32))


def test_forged_and_foreign_results_are_ignored_and_bad_checksums_retransmitted() -> None:
    model = _model()
    workers = _cluster(model)
    ports = workers[0].transport.ports  # type: ignore[attr-defined]
    real_emit = model._emit
    forged = {"n": 0}

    def tamper(port: int, frame: bytes) -> None:
        payload = frame[42:]
        if port == 1 and forged["n"] < 3 and payload[P.OFF_FMT_FLAGS] & P.FLAG_RESULT:
            forged["n"] += 1
            head = frame[:42]
            other_job = bytearray(payload)
            other_job[0:2] = (JOB + 1).to_bytes(2, "big")
            wrong_step = bytearray(payload)
            wrong_step[P.OFF_STEP : P.OFF_STEP + 4] = (12345).to_bytes(4, "big")
            wrong_slot = bytearray(payload)
            wrong_slot[P.OFF_SLOT : P.OFF_SLOT + 2] = ((int.from_bytes(payload[2:4], "big") + 1) % 8).to_bytes(2, "big")
            bad_sum = bytearray(payload)
            bad_sum[-1] ^= 0x01  # one flipped bit in the last value: checksum no longer matches
            for p in (other_job, wrong_step, wrong_slot, bad_sum):
                ports._on_output(1, head + bytes(p))
            return  # the genuine RESULT for worker 0 is "lost"; its retransmission fetches it back
        real_emit(port, frame)

    model._emit = tamper
    data = [np.arange(200, dtype=np.int32) * (r + 1) for r in range(N)]
    out = _run_all(workers, lambda w: w.allreduce(data[w.rank]))
    assert np.array_equal(out[0], np.arange(200, dtype=np.int32) * 10)
    st = workers[0].stats
    assert st.checksum_failures == 3 and st.ignored >= 9 and st.retransmissions >= 3


def test_not_admitted_and_timeout_errors_are_clear() -> None:
    model = _model(ports=[11, 12, 13, 14])  # nobody is admitted on ports 1..4
    workers = _cluster(model, timeout=0.005, max_retries=2, max_timeout=0.01)
    with pytest.raises(JobNotAdmittedError, match="job 7 rank 0: the switch never answered"):
        workers[0].allreduce(np.zeros(10, dtype=np.int32))

    model = _model()
    workers = _cluster(model, timeout=0.005, max_retries=2, max_timeout=0.01)
    _run_all(workers, lambda w: w.allreduce(np.ones(10, dtype=np.int32)))
    model.loss = 1.0  # the link dies after a successful call
    with pytest.raises(AllReduceTimeoutError, match=r"after 2 retries; 3/3 chunks missing: 0, 1, 2"):
        workers[0].allreduce(np.ones(150, dtype=np.int32))


def test_wrong_array_types_and_bad_configuration() -> None:
    w = _cluster(_model())[0]
    for bad in ([1.0, 2.0], np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.float16)):
        with pytest.raises(ArrayTypeError):
            w.allreduce(bad)  # type: ignore[arg-type]
    assert w.allreduce(np.zeros(0, dtype=np.float32)).shape == (0,)
    with pytest.raises(ProtocolError):
        Worker(70000, 0, n_workers=1, transport=w.transport)
    with pytest.raises(ProtocolError):
        Worker(1, 0, n_workers=1, transport=w.transport, child=40)
    with pytest.raises(ProtocolError):
        Worker(1, 3, n_workers=2, transport=w.transport)


def test_a_result_missing_contributions_is_a_clear_error() -> None:
    model = _model(n_children=2, ports=[1, 2])  # the switch was told 2 children, the workers think they are 4
    workers = _cluster(model)[:2]
    with pytest.raises(ProtocolError, match="sums 2 contributions but the job has 4 workers"):
        _run_all(workers, lambda w: w.allreduce(np.ones(5, dtype=np.int32)))
