"""P4Runtime fuzzing with an oracle independent of the server (`p4runtime_oracle`: the P4Runtime specification and the
P4Info, no server code). The oracle is first held against real BMv2's recorded answers (the conformance transcript),
then every seeded request, valid or mutated, goes to a live server: its codes must be ones the specification allows,
what it accepted must read back in canonical form, and its whole state must equal the oracle's model."""

from __future__ import annotations

import json
import random
import time

from google.protobuf import text_format
from p4.v1 import p4runtime_pb2
from p4runtime_fuzzing import Generator, new_checker
from p4runtime_oracle import OK, Model, Refused, Schema, canonical, fits, normalized
from p4runtime_support import CONFORMANCE, Client, load_p4info

from p4switch.server import P4RuntimeServer, StateDevice

ELECTION = 1
SEED = 20261201
WRITES, READS = 1500, 300
BUDGET_S = 150.0  # a cap on a slow machine, not an assertion: the loop ends early and says so


def test_oracle_bytestrings_follow_the_spec_examples() -> None:
    """The spec's tables of valid and invalid byte strings (section Bytestrings), unsigned rows."""
    valid = [(8, b"\x63", 99), (16, b"\x00\x63", 99), (16, b"\x63", 99), (16, b"\x30\x64", 12388),
             (16, b"\x00\x30\x64", 12388), (12, b"\x00\x63", 99), (12, b"\x63", 99), (12, b"\x00\x00\x63", 99)]
    for width, data, value in valid:
        assert fits(data, width) == value, (width, data)
    for width, data in [(8, b"\x01\x63"), (8, b""), (16, b"\x01\x00\x63"), (12, b"\x10\x63"), (12, b"\x01\x00\x63"),
                        (12, b"\x00\x40\x63")]:
        assert fits(data, width) is None, (width, data)
    assert canonical(0) == b"\x00" and canonical(99) == b"\x63" and canonical(12388) == b"\x30\x64"


def test_oracle_agrees_with_the_recorded_bmv2_transcript() -> None:
    """Every Write and Read real simple_switch_grpc answered in the conformance transcript: the oracle expects exactly
    BMv2's code for each update and predicts each read's entities exactly."""
    model = Model(Schema.from_p4info(load_p4info("runtime_tables")))
    primary = 10
    checked = 0
    pipeline = False
    for line in (CONFORMANCE / "p4runtime" / "runtime_tables.jsonl").read_text().splitlines():
        step = json.loads(line)
        if step["rpc"] == "SetForwardingPipelineConfig":
            pipeline = True
            continue
        if step["rpc"] == "Write" and pipeline:
            request = text_format.Parse(step["request"], p4runtime_pb2.WriteRequest())
            if request.election_id.low != primary:
                assert step["code"] == "PERMISSION_DENIED"
                continue
            recorded = step["update_codes"] or [OK] * len(request.updates)
            for update, code in zip(request.updates, recorded, strict=True):
                allowed = model.update(update)
                model.settle(code)
                assert allowed == {code}, (step["step"], code, sorted(allowed))  # exactly BMv2's code
                checked += 1
        elif step["rpc"] == "Read":
            request = text_format.Parse(step["request"], p4runtime_pb2.ReadRequest())
            want = [text_format.Parse(text, p4runtime_pb2.Entity()) for text in step["response"]]
            got: list[p4runtime_pb2.Entity] = []
            for entity in request.entities:
                if entity.HasField("table_entry"):
                    got += model.read_table(entity.table_entry)
                else:
                    got += model.read_groups(entity.packet_replication_engine_entry.multicast_group_entry
                                             .multicast_group_id)
            assert normalized(got) == normalized(want), step["step"]
            checked += 1
    assert checked >= 25


def test_oracle_refuses_what_the_spec_refuses() -> None:
    """A few rules by hand, so that an oracle that accepted everything would fail here."""
    model = Model(Schema.from_p4info(load_p4info("runtime_tables")))
    lpm = ('table_entry { table_id: 49652232 match { field_id: 1 lpm { value: "\\n\\000\\000\\000" prefix_len: 8 } } '
           'action { action { action_id: 28749719 params { param_id: 1 value: "\\003" } } } }')

    def update(kind: int, text: str) -> frozenset[str]:
        u = p4runtime_pb2.Update(type=kind)
        text_format.Parse(text, u.entity)
        return model.update(u)

    insert, modify, delete = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE
    assert update(insert, lpm) == {OK}
    assert update(insert, lpm) == {"ALREADY_EXISTS"}
    assert update(insert, lpm[:-1] + " is_const: true }") == {"INVALID_ARGUMENT", "ALREADY_EXISTS"}
    assert update(delete, lpm.replace("\\n\\000", "\\013\\000")) == {"NOT_FOUND"}
    assert update(modify, lpm.replace("prefix_len: 8", "prefix_len: 4")) == {"INVALID_ARGUMENT"}  # bits past /4
    wide = lpm.replace("\\n\\000", "\\014\\000").replace('value: "\\003"', 'value: "\\002\\000"')
    assert update(insert, wide) == {"INVALID_ARGUMENT"}  # 512 does not fit the 9-bit port
    default = 'table_entry { table_id: 49652232 is_default_action: true idle_timeout_ns: 5 }'
    assert update(modify, default) == {"INVALID_ARGUMENT"}
    assert update(insert, "packet_replication_engine_entry { clone_session_entry { session_id: 0 } }") \
        == {"INVALID_ARGUMENT", "OUT_OF_RANGE"}
    assert update(insert, "packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 1 "
                          "replicas { egress_port: 1 instance: 70000 } } }") == {"INVALID_ARGUMENT"}
    try:
        model.read_table(text_format.Parse("table_id: 7", p4runtime_pb2.TableEntry()))
        raise AssertionError("an unknown table id must be refused")
    except Refused as refused:
        assert refused.codes <= {"INVALID_ARGUMENT", "NOT_FOUND"}


def test_seeded_fuzzing_agrees_with_the_spec_oracle() -> None:
    """1,500 Writes (valid and mutated, every one sent) and 300 Reads against a live server: no answer the spec
    forbids, every accepted update reads back as the oracle's canonical entity, and the switch's whole state equals
    the oracle's model every 100 requests and at the end."""
    p4info = load_p4info("runtime_tables")
    server = P4RuntimeServer(StateDevice(), address="127.0.0.1:0").start()
    client = Client(f"127.0.0.1:{server.port}", election_id=ELECTION)
    try:
        client.arbitrate()
        client.set_pipeline(p4info)
        gen = Generator(p4info, random.Random(SEED), ELECTION)
        checker = new_checker(client, p4info, ELECTION)
        deadline = time.monotonic() + BUDGET_S
        writes = reads = 0
        while (writes < WRITES or reads < READS) and time.monotonic() < deadline:
            if reads < READS and (writes >= WRITES or gen.rng.random() < READS / (WRITES + READS)):
                checker.read(gen.read(), f"read #{reads}")
                reads += 1
            else:
                checker.write(gen.write(), f"write #{writes}")
                writes += 1
            if (writes + reads) % 100 == 0:
                checker.whole_state()
        checker.whole_state()
        tally = checker.tally
        print(f"writes {writes}/{WRITES}, reads {reads}/{READS}, accepted updates {tally.accepted_updates}, refused "
              f"{tally.refused_updates}, read-backs {tally.read_backs}, answers {tally.codes}")
        assert not tally.disagreements, "\n\n".join(tally.disagreements[:8]) + f"\n({len(tally.disagreements)} in all)"
        assert writes >= 300 and reads >= 50  # even a capped run covers something
        assert tally.accepted_updates > 100 and tally.refused_updates > 100 and tally.read_backs > 100
        assert {"OK", "UNKNOWN", "PERMISSION_DENIED"} <= set(tally.codes), tally.codes
    finally:
        client.close()
        server.stop()
