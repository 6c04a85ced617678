"""Two (and more) clients on one embedded P4Runtime server: only the primary writes, a backup takes over when the
primary leaves, a higher election id takes over, a duplicate election id is refused."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
from p4runtime_support import Client, code_name, grpc_code_name, load_p4info, table_update

from p4switch.server import P4RuntimeServer, StateDevice

INSERT = p4runtime_pb2.Update.INSERT


def lpm_entry(first_octet: int, port: int) -> str:
    value = "\\" + format(first_octet, "03o") + "\\000\\000\\000"
    return (f'table_entry {{ table_id: 49652232 match {{ field_id: 1 lpm {{ value: "{value}" prefix_len: 8 }} }} '
            f'action {{ action {{ action_id: 28749719 params {{ param_id: 1 value: "\\{port:03o}" }} }} }} }}')


@pytest.fixture()
def address() -> Iterator[str]:
    srv = P4RuntimeServer(StateDevice(), address="127.0.0.1:0").start()
    yield f"127.0.0.1:{srv.port}"
    srv.stop()


@pytest.fixture()
def clients() -> Iterator[list[Client]]:
    made: list[Client] = []
    yield made
    for c in made:
        c.close()


def test_only_the_primary_writes_and_a_backup_takes_over(address: str, clients: list[Client]) -> None:
    primary = Client(address, election_id=10)
    backup = Client(address, election_id=5)
    clients += [primary, backup]
    assert code_name(primary.arbitrate().arbitration.status.code) == "OK"
    reply = backup.arbitrate().arbitration
    assert code_name(reply.status.code) == "ALREADY_EXISTS"
    assert reply.election_id.low == 10  # the primary's id

    primary.set_pipeline(load_p4info("runtime_tables"))
    with pytest.raises(grpc.RpcError) as denied:
        backup.set_pipeline(load_p4info("runtime_tables"))
    assert grpc_code_name(denied.value) == "PERMISSION_DENIED"

    assert backup.write_updates(table_update(INSERT, lpm_entry(10, 1))) == ("PERMISSION_DENIED", [])
    assert primary.write_updates(table_update(INSERT, lpm_entry(10, 1))) == ("OK", [])
    assert len(backup.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=49652232)))) == 1

    primary.close()
    clients.remove(primary)
    promoted = backup.next("arbitration").arbitration
    assert code_name(promoted.status.code) == "OK"
    assert promoted.election_id.low == 5
    assert backup.write_updates(table_update(INSERT, lpm_entry(11, 2))) == ("OK", [])


def test_a_higher_election_id_takes_over_and_the_old_primary_is_told(address: str, clients: list[Client]) -> None:
    first = Client(address, election_id=10)
    clients.append(first)
    assert code_name(first.arbitrate().arbitration.status.code) == "OK"
    first.set_pipeline(load_p4info("runtime_tables"))
    second = Client(address, election_id=20)
    clients.append(second)
    assert code_name(second.arbitrate().arbitration.status.code) == "OK"
    demoted = first.next("arbitration").arbitration
    assert code_name(demoted.status.code) == "ALREADY_EXISTS"
    assert demoted.election_id.low == 20
    assert first.write_updates(table_update(INSERT, lpm_entry(10, 1))) == ("PERMISSION_DENIED", [])
    assert second.write_updates(table_update(INSERT, lpm_entry(10, 1))) == ("OK", [])


def test_a_duplicate_election_id_is_refused_and_the_primary_keeps_its_role(address: str, clients: list[Client]) -> None:
    first = Client(address, election_id=7)
    twin = Client(address, election_id=7)
    clients += [first, twin]
    assert code_name(first.arbitrate().arbitration.status.code) == "OK"
    assert twin.arbitrate() is None  # the stream ends instead of answering
    assert twin.stream_error is not None and twin.stream_error.code().name == "INVALID_ARGUMENT"
    first.set_pipeline(load_p4info("runtime_tables"))
    assert first.write_updates(table_update(INSERT, lpm_entry(10, 1))) == ("OK", [])


def test_a_stream_for_another_device_is_refused(address: str, clients: list[Client]) -> None:
    stranger = Client(address, device_id=3, election_id=1)
    clients.append(stranger)
    assert stranger.arbitrate() is None
    assert stranger.stream_error is not None and stranger.stream_error.code().name == "NOT_FOUND"


def test_pi_conventions_election_id_zero_tooling_writes_and_stream_limits(address: str, clients: list[Client]) -> None:
    """As PI: with no stream at all a request without an election id may write (grpc_cli and friends); 0 is an
    election id like any other; at most 16 streams; a stream may not switch device ids."""
    channel = grpc.insecure_channel(address)
    stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
    try:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=0, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.config.p4info.CopyFrom(load_p4info("runtime_tables"))
        stub.SetForwardingPipelineConfig(req)  # no stream, no election id: accepted
        write = p4runtime_pb2.WriteRequest(device_id=0, updates=[table_update(INSERT, lpm_entry(10, 1))])
        stub.Write(write)

        zero = Client(address, election_id=0)
        clients.append(zero)
        assert code_name(zero.arbitrate().arbitration.status.code) == "OK"  # 0 is a valid election id
        with pytest.raises(grpc.RpcError) as denied:
            stub.Write(p4runtime_pb2.WriteRequest(device_id=0, updates=[table_update(INSERT, lpm_entry(11, 1))],
                                                  election_id=p4runtime_pb2.Uint128(low=3)))
        assert grpc_code_name(denied.value) == "PERMISSION_DENIED"
        assert zero.write_updates(table_update(INSERT, lpm_entry(11, 1))) == ("OK", [])

        for election in range(1, 16):
            extra = Client(address, election_id=100 + election)
            clients.append(extra)
            assert extra.arbitrate() is not None
        assert zero.next("arbitration") is not None  # told about the new primaries
        seventeenth = Client(address, election_id=999)
        clients.append(seventeenth)
        assert seventeenth.arbitrate() is None
        assert seventeenth.stream_error is not None
        assert seventeenth.stream_error.code().name == "RESOURCE_EXHAUSTED"

        mover = clients[-2]
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.arbitration.device_id = 1
        msg.arbitration.election_id.low = mover.election_id
        mover.send(msg)
        while mover.next("arbitration") is not None:  # drain notifications until the stream ends
            pass
        assert mover.stream_error is not None and mover.stream_error.code().name == "NOT_FOUND"
    finally:
        channel.close()
