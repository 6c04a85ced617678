"""Seeded port impairments: loss, duplication, reordering, delay; reproducible for a seed."""

from __future__ import annotations

import pytest

from p4switch.switch.impairments import Impairment, ImpairmentConfig, ImpairmentError


def run(config: ImpairmentConfig, n: int = 200) -> list[bytes]:
    imp = Impairment(config)
    out = []
    for i in range(n):
        out += [f for _, f in imp.process(i.to_bytes(2, "big"), float(i))]
    out += [f for _, f in imp.expire(float("inf"))]
    return out


def test_same_seed_same_decisions_other_seed_other_decisions() -> None:
    cfg = ImpairmentConfig(loss=0.2, dup=0.1, reorder=0.1, seed=7)
    assert run(cfg) == run(cfg)
    assert run(cfg) != run(ImpairmentConfig(loss=0.2, dup=0.1, reorder=0.1, seed=8))


def test_loss_rate_is_roughly_the_probability() -> None:
    out = run(ImpairmentConfig(loss=0.3, seed=1), n=2000)
    assert 1200 < len(out) < 1600


def test_full_loss_and_full_duplication() -> None:
    assert run(ImpairmentConfig(loss=1.0)) == []
    out = run(ImpairmentConfig(dup=1.0), n=3)
    assert out == [b"\x00\x00", b"\x00\x00", b"\x00\x01", b"\x00\x01", b"\x00\x02", b"\x00\x02"]


def test_reorder_swaps_with_the_next_frame() -> None:
    out = run(ImpairmentConfig(reorder=1.0), n=4)
    assert out == [b"\x00\x01", b"\x00\x00", b"\x00\x03", b"\x00\x02"]


def test_delay_and_jitter_set_release_times() -> None:
    imp = Impairment(ImpairmentConfig(delay_ms=10, jitter_ms=5, seed=3))
    times = [imp.process(b"x", 1.0)[0][0] for _ in range(50)]
    assert all(1.010 <= t <= 1.015 for t in times) and len(set(times)) > 1


def test_held_frame_is_released_after_its_hold_time() -> None:
    imp = Impairment(ImpairmentConfig(reorder=1.0, reorder_hold_ms=50))
    assert imp.process(b"a", 0.0) == [] and imp.holding
    assert imp.expire(0.01) == []
    assert imp.expire(0.06) == [(0.06, b"a")]


@pytest.mark.parametrize("bad", [{"loss": 1.5}, {"dup": -0.1}, {"delay_ms": -1}])
def test_invalid_configs(bad: dict[str, float]) -> None:
    with pytest.raises(ImpairmentError):
        Impairment(ImpairmentConfig(**bad))  # type: ignore[arg-type]


def test_corruption_flips_exactly_one_bit() -> None:
    imp = Impairment(ImpairmentConfig(corrupt=1.0, seed=5))
    frame = bytes(64)
    (_, damaged), = imp.process(frame, 0.0)
    assert sum(bin(b).count("1") for b in damaged) == 1 and imp.corrupted == 1


def test_instant_verdicts_are_the_same_draws_as_the_delay_line() -> None:
    """`pass_now` (decided in place) and `process` (the delay line) impair the same frames for the same seed."""
    cfg = ImpairmentConfig(loss=0.3, dup=0.2, corrupt=0.1, seed=7)
    assert cfg.instant and not ImpairmentConfig(loss=0.1, delay_ms=1.0).instant
    assert not ImpairmentConfig(reorder=0.1).instant and not ImpairmentConfig(jitter_ms=1.0).instant
    inline, queued = Impairment(cfg), Impairment(cfg)
    frames = [bytes([i % 256]) * 64 for i in range(2000)]
    assert [inline.pass_now(f) for f in frames] == [[f for _, f in queued.process(f, 1.0)] for f in frames]
    assert (inline.lost, inline.duplicated, inline.corrupted) == (queued.lost, queued.duplicated, queued.corrupted)
    assert inline.lost > 0 and inline.duplicated > 0 and inline.corrupted > 0


@pytest.mark.parametrize("cfg", [ImpairmentConfig(loss=0.3, seed=11), ImpairmentConfig(loss=0.3, dup=0.2, corrupt=0.1, seed=7)],
                         ids=["loss-only", "loss-dup-corrupt"])
def test_burst_verdicts_are_the_per_frame_draws(cfg: ImpairmentConfig) -> None:
    """`pass_many` (a burst, the loss-only comprehension or the general path) keeps, in order, exactly the frames
    the delay line's `process` would let out for the same seed, and counts the same losses; `pass_now` (one frame,
    its own loss-only branch) too."""
    frames = [i.to_bytes(2, "big") * 32 for i in range(3000)]
    burst, single, queued = Impairment(cfg), Impairment(cfg), Impairment(cfg)
    expected = [f for frame in frames for _, f in queued.process(frame, 1.0)]
    got = [f for i in range(0, len(frames), 37) for f in burst.pass_many(frames[i:i + 37])]
    assert got == expected
    assert [f for frame in frames for f in single.pass_now(frame)] == expected
    assert burst.lost == single.lost == queued.lost > 0
    assert burst.loss_only == (not cfg.dup and not cfg.corrupt)
