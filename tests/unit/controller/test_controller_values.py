"""The controller learns a pipeline's values per packet (N) from P4Info alone (docs/p4-program.md, "Values per
packet"), records it with each job and refuses a job asking for another N before anything is installed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from controller_p4rt_double import DoubleServer
from controller_program_p4info import documented_p4info
from p4.config.v1 import p4info_pb2

from controller.exceptions import JobError, P4InfoError
from controller.fabric import Fabric
from controller.jobs import JobManager
from controller.p4info import P4InfoHelper
from controller.program import BITMAP_REGISTER, P4inaProgram, pipeline_values
from controller.state import ControllerState
from controller.topologies import leaf_spine


def _p4info(annotation: str | None, value_registers: int = 0) -> p4info_pb2.P4Info:
    """The documented control-plane P4Info, with an annotation on agg_bitmap and `value_registers` agg_v* arrays
    (named as the program names them: octal, at least two digits)."""
    info = documented_p4info()
    if annotation is not None:
        next(r for r in info.registers if r.preamble.name == BITMAP_REGISTER).preamble.annotations.append(annotation)
    digits = max(2, len(f"{value_registers - 1:o}")) if value_registers else 2
    for i in range(value_registers):
        r = info.registers.add()
        r.preamble.id = 0x13100000 + i
        r.preamble.name = f"P4inaIngress.aggregation.agg_v{i:0{digits}o}"
        r.size = 1024
        r.type_spec.bitstring.bit.bitwidth = 32
    return info


@pytest.mark.parametrize("n", [32, 256, 2048])
def test_n_from_the_annotation_and_the_value_registers(n: int) -> None:
    assert pipeline_values(P4InfoHelper(_p4info(f"@p4ina_values({n})", n))) == n
    assert pipeline_values(P4InfoHelper(_p4info(f"@p4ina_values({n})"))) == n  # value registers left out of P4Info


def test_a_build_without_the_annotation_is_64() -> None:
    assert pipeline_values(P4InfoHelper(_p4info(None))) == 64
    assert pipeline_values(P4InfoHelper(_p4info(None, 64))) == 64


def test_annotation_and_registers_must_agree() -> None:
    with pytest.raises(P4InfoError, match=r"declares 128 values per packet .* has 64 value registers"):
        pipeline_values(P4InfoHelper(_p4info("@p4ina_values(128)", 64)))
    with pytest.raises(P4InfoError, match="32 value registers"):
        pipeline_values(P4InfoHelper(_p4info(None, 32)))
    with pytest.raises(P4InfoError, match="malformed"):
        pipeline_values(P4InfoHelper(_p4info("@p4ina_values(many)")))


def test_not_the_p4ina_program() -> None:
    info = p4info_pb2.P4Info()
    with pytest.raises(P4InfoError, match="not the p4ina program"):
        pipeline_values(P4InfoHelper(info))


@pytest.fixture
def jobs() -> Iterator[tuple[JobManager, dict[str, DoubleServer]]]:
    topo = leaf_spine(leaves=2, spines=1, hosts_per_leaf=2)
    servers = {name: DoubleServer() for name in topo.switches}
    for name, s in servers.items():
        topo.switches[name].grpc = s.address
    info = _p4info("@p4ina_values(256)", 256)
    fab = Fabric(topo, timeout=5)
    fab.push_pipeline(info, b"{}").raise_first()
    yield JobManager(topo, fab, P4inaProgram(), P4InfoHelper(info), ControllerState()), servers
    fab.close()
    for s in servers.values():
        s.stop()


def test_job_records_the_pipelines_n(jobs: tuple[JobManager, dict[str, DoubleServer]]) -> None:
    manager, _ = jobs
    assert manager.create(["h1", "h2", "h3", "h4"], slots=8).values == 256
    assert manager.create(["h1", "h2"], slots=8, values=256).values == 256


def test_job_of_another_n_is_refused_before_any_write(jobs: tuple[JobManager, dict[str, DoubleServer]]) -> None:
    manager, servers = jobs
    with pytest.raises(JobError, match="asks for 64 values per packet but the pipeline carries 256"):
        manager.create(["h1", "h2", "h3", "h4"], slots=8, values=64)
    assert not manager.state.jobs
    assert all(not s.servicer.tables and not s.servicer.groups for s in servers.values())
