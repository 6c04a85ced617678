"""An idle switch's P4Runtime timers: the housekeeping thread polls digests every 2 ms only while one holds a
sample or awaits an ack, and sleeps until the next idle timeout sweep (100 ms) otherwise; a push that leaves a digest
work wakes it (`DigestState.on_pending`). Expected behaviour from PI's digest semantics (a batch goes out at the
latest `max_timeout_ns` after its first sample), not from our own output."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from p4.v1 import p4runtime_pb2
from p4runtime_support import live_switch, table_update
from test_p4runtime_digests_live import LEARN_P4, frame

from p4switch.runtime.state import DigestConfig, DigestState


def counting(fn: Callable[..., Any], calls: list[int]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return fn(*args, **kwargs)
    return wrapper


def test_idle_switch_timer_sleeps_and_a_batched_digest_still_goes_out() -> None:
    with live_switch(LEARN_P4, "learn") as (program, switch, client):
        [info] = program.p4info.digests
        config = (f"digest_entry {{ digest_id: {info.preamble.id} config {{ max_timeout_ns: 1000000 "
                  "max_list_size: 16 ack_timeout_ns: 0 } }")  # what the fabric's controller asks: 1 ms batches
        assert client.write_updates(table_update(p4runtime_pb2.Update.INSERT, config)) == ("OK", [])
        digest = switch.state.digests[info.preamble.id]
        polls: list[int] = []
        digest.poll = counting(digest.poll, polls)
        time.sleep(0.5)
        # polling every 2 ms would be about 250 calls; sweeps every 100 ms are 5 (a few more on a loaded machine)
        assert len(polls) <= 15, len(polls)
        switch.inject(2, frame(0x020000000002))  # one sample: the list (up to 16) waits for its 1 ms timeout
        got = client.next("digest", timeout=10).digest
        assert got.digest_id == info.preamble.id and len(got.data) == 1
        assert digest.idle()


def test_on_pending_is_called_when_a_push_leaves_work_for_poll() -> None:
    digest = DigestState("d", 1, [8])
    calls: list[int] = []
    digest.on_pending = lambda: calls.append(1)
    sent: list[Any] = []
    digest.sink = sent.append
    digest.configure(DigestConfig(max_timeout_ns=0, max_list_size=1, ack_timeout_ns=0))
    digest.push((1,), now_ns=0)  # sent at once, nothing awaits an ack: no work for poll
    assert calls == [] and len(sent) == 1 and digest.idle()
    digest.configure(DigestConfig(max_timeout_ns=1000, max_list_size=4, ack_timeout_ns=0))
    digest.push((2,), now_ns=0)  # pending until its timeout: poll must run
    digest.push((3,), now_ns=1)  # already pending: no second wake-up
    assert calls == [1] and not digest.idle()
    digest.poll(now_ns=1000)
    assert len(sent) == 2 and digest.idle()
    digest.configure(DigestConfig(max_timeout_ns=0, max_list_size=1, ack_timeout_ns=5000))
    digest.push((4,), now_ns=2000)  # sent at once but awaiting its ack: poll expires it
    assert calls == [1, 1] and not digest.idle()
    digest.poll(now_ns=7000)
    assert digest.idle()
