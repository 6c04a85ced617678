"""Loading a pipeline: device config checks, P4Info in text or binary, the default P4Info path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from p4.config.v1 import p4info_pb2
from switch_ctlprog import device_config, p4info

from p4switch.exceptions import DeviceConfigError
from p4switch.p4info_files import read_p4info as load_p4info
from p4switch.switch.pipeline import build_pipeline, default_p4info_path, parse_device_config


def test_default_p4info_path_is_next_to_the_config() -> None:
    assert default_p4info_path("build/prog.json") == Path("build/prog.p4info.txtpb")


def test_p4info_text_and_binary(tmp_path: Path) -> None:
    info = p4info_pb2.P4Info(pkg_info=p4info_pb2.PkgInfo(arch="v1model", name="x"))
    (tmp_path / "a.txtpb").write_text(str(info))
    (tmp_path / "b.bin").write_bytes(info.SerializeToString())
    assert load_p4info(tmp_path / "a.txtpb") == info
    assert load_p4info(tmp_path / "b.bin") == info


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot read P4Info"), (b"\xff\xfe garbage {", "is not a P4Info")],
)
def test_bad_p4info(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "p.txtpb"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(DeviceConfigError, match=message):
        load_p4info(path)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (b"[1, 2]", "not a JSON object"),
        (json.dumps({"format": "p4ina-v1model/1"}).encode(), "old format"),
        (json.dumps({"format": "p4ina-v1model/2", "python": "def build(rt):\n    return object()\n"}).encode(),
         "carried Python code"),
        (json.dumps({"format": "p4ina-v1model/2", "name": "x"}).encode(), "lacks program, program_sha256"),
    ],
)
def test_bad_device_configs(config: bytes, message: str) -> None:
    with pytest.raises(DeviceConfigError, match=message):
        build_pipeline(p4info_pb2.P4Info(), config)


def test_good_config_builds_state_bindings_and_program() -> None:
    assert parse_device_config(device_config()).name == "ctlprog"
    pipeline = build_pipeline(p4info(), device_config(), seed=3)
    assert pipeline.name == "ctlprog" and pipeline.rt.state is pipeline.state
    assert pipeline.rt.random(0, 1000) == build_pipeline(p4info(), device_config(), seed=3).rt.random(0, 1000)


def test_a_p4info_that_does_not_describe_the_program_is_refused() -> None:
    with pytest.raises(DeviceConfigError, match="P4Info does not match"):
        build_pipeline(p4info_pb2.P4Info(pkg_info=p4info_pb2.PkgInfo(arch="psa")), device_config())
