"""Shared set-up for the engine tests: the hand-written contract program plus PRE entries written through the
real P4Runtime entity codec."""

from __future__ import annotations

from google.protobuf import text_format
from p4.v1 import p4runtime_pb2
from switch_ctlprog import device_config, p4info

from p4switch.switch.entries_file import apply_write_request
from p4switch.switch.filemode import FileModeRunner
from p4switch.switch.pipeline import Pipeline, build_pipeline

PRE = """
updates { type: INSERT entity { packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 1
  replicas { egress_port: 1 instance: 7 } replicas { egress_port: 2 instance: 8 } replicas { egress_port: 1 instance: 9 } } } } }
updates { type: INSERT entity { packet_replication_engine_entry { clone_session_entry { session_id: 5
  replicas { egress_port: 4 instance: 0 } } } } }
updates { type: INSERT entity { packet_replication_engine_entry { clone_session_entry { session_id: 6
  replicas { egress_port: 3 instance: 0 } packet_length_bytes: 10 } } } }
"""


def pipeline_with_pre(pre: str = PRE) -> Pipeline:
    pipeline = build_pipeline(p4info(), device_config())
    apply_write_request(pipeline.state, text_format.Parse(pre, p4runtime_pb2.WriteRequest()))
    return pipeline


def runner(priority_queues: int = 1, **kwargs: object) -> FileModeRunner:
    return FileModeRunner(
        pipeline_with_pre(), {i: f"p{i}" for i in range(5)}, priority_queues=priority_queues, **kwargs  # type: ignore[arg-type]
    )
