"""The data-parallel digits example in a short run: 4 DDP processes with the p4ina hook (host-ring backend)
reach the single-process accuracy within 1 percentage point."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="torch is not installed (pip install 'p4ina[torch]')")
pytest.importorskip("sklearn", reason="scikit-learn is not installed (pip install 'p4ina[torch]')")

from hostagent.train_digits import TrainConfig, main, run


@pytest.mark.slow
def test_short_training_run_matches_single_process() -> None:
    result = run(TrainConfig(workers=4, epochs=12, backend="ring"))
    assert result.single_accuracy > 0.9
    assert result.difference_pp <= 1.0
    assert result.buckets_per_worker > 0


def test_unknown_backend_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--backend", "carrier-pigeon"])
    assert "invalid choice" in capsys.readouterr().err
