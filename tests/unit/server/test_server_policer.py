"""The control-plane policers: token bucket arithmetic on a fake clock, bad settings refused, and the service
dropping (and counting) packet-ins and digest lists over the cap, and messages for a client that stops reading."""

from __future__ import annotations

import pytest
from p4.v1 import p4runtime_pb2

from p4switch.runtime.state import DigestList
from p4switch.server import StateDevice
from p4switch.server.arbitration import Stream
from p4switch.server.policer import PolicerConfig, PolicerError, TokenBucket
from p4switch.server.service import MAX_BACKLOG, P4RuntimeService


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_passes_its_burst_then_its_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(PolicerConfig(rate=10, burst=3), clock=clock)
    assert [bucket.allow() for _ in range(5)] == [True, True, True, False, False]
    clock.now += 0.25  # 2.5 tokens
    assert [bucket.allow() for _ in range(3)] == [True, True, False]
    clock.now += 60  # refill stops at the burst
    assert sum(bucket.allow() for _ in range(10)) == 3
    assert bucket.snapshot() == {"rate": 10, "burst": 3, "passed": 8, "dropped": 10}


def test_rate_zero_drops_everything_and_none_passes_everything() -> None:
    clock = FakeClock()
    zero = TokenBucket(PolicerConfig(rate=0, burst=1), clock=clock)
    assert zero.allow() and not zero.allow()
    clock.now += 1e6
    assert not zero.allow()
    off = TokenBucket(clock=clock)
    assert all(off.allow() for _ in range(1000)) and off.snapshot()["passed"] == 1000


@pytest.mark.parametrize("config", [PolicerConfig(rate=-1), PolicerConfig(rate=float("nan")),
                                    PolicerConfig(rate=float("inf")), PolicerConfig(rate=1, burst=0),
                                    PolicerConfig(rate=1, burst=True)])
def test_bad_settings_are_one_line_errors(config: PolicerConfig) -> None:
    with pytest.raises(PolicerError, match="policer"):
        config.validate()


def _service_with_primary(**policers: PolicerConfig) -> tuple[P4RuntimeService, Stream]:
    service = P4RuntimeService(StateDevice(), 0, **policers)
    stream = Stream(peer="test")
    update = p4runtime_pb2.MasterArbitrationUpdate(device_id=0)
    update.election_id.low = 1
    service.arbitrator.arbitrate(stream, update)
    while not stream.outbox.empty():  # the arbitration answer
        stream.outbox.get_nowait()
    return service, stream


def test_packet_ins_and_digest_lists_over_the_cap_are_dropped_and_counted() -> None:
    service, stream = _service_with_primary(packet_in_policer=PolicerConfig(rate=0, burst=5),
                                            digest_policer=PolicerConfig(rate=0, burst=2))
    for _ in range(50):
        service._on_packet_in(b"\x00" * 64)
    for i in range(10):
        service._on_digest(DigestList(digest_id=1, list_id=i + 1, data=[(i,)], timestamp_ns=0))
    assert stream.outbox.qsize() == 5 + 2
    assert service.counters["packet_in"] == 5 and service.counters["packet_in_policed"] == 45
    assert service.counters["digest_lists"] == 2 and service.counters["digest_lists_policed"] == 8


def test_a_client_that_stops_reading_does_not_grow_the_server_without_bound() -> None:
    service, stream = _service_with_primary()  # no policer: only the backlog cap holds
    for _ in range(MAX_BACKLOG + 100):
        service._on_packet_in(b"\x01" * 16)
    assert stream.outbox.qsize() == MAX_BACKLOG
    assert service.counters["stream_backlog_dropped"] == 100
