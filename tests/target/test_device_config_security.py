"""The device config is data (issue 19): hostile `p4_device_config`s over real P4Runtime on loopback.

A live switch forwards with program A (everything to port 1). Every hostile config — Python code in each string
field, the old code-carrying format, a program with a preprocessing directive, huge and deeply nested JSON, a
`P4DeviceConfig` wrapper holding garbage, a P4Info that does not describe the program — must be refused with
INVALID_ARGUMENT and a reason, and the switch must keep forwarding with program A. Every piece of code carries a
canary (it would create a file); the canary file must never exist. Names that would break out of generated code
(`@name` with quotes and newlines, a `log_msg` string) compile but stay string literals. The accepted forms: the
JSON bytes, PI's `p4.tmp.P4DeviceConfig` wrapper, and p4runtime-shell's push from files.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from p4runtime_support import Client, code_name, live_switch
from switch_cli_runner import run_switch

from p4switch import device_config as dc
from p4switch import device_loader
from p4switch.compiler import compile_text, write_outputs

FRAME = bytes.fromhex("ffffffffffff" "020000000001" "88b5") + b"device config security"

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct h_t { eth_t eth; }
struct m_t { }
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(h.eth); transition accept; }
}
control V(inout h_t h, inout m_t m) { apply { } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    table fwd { key = { sm.ingress_port: exact; } actions = { to; } default_action = to(OUT_PORT); }
    apply { fwd.apply(); }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { p.emit(h.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def program(out_port: int) -> str:
    return PROGRAM.replace("OUT_PORT", str(out_port))


def canary_code(canary: Path) -> str:
    return f"__import__('pathlib').Path({str(canary)!r}).touch()"


class Outputs:
    """Frames the switch sends, per port."""

    def __init__(self) -> None:
        self.frames: list[tuple[int, bytes]] = []
        self.lock = threading.Lock()

    def __call__(self, port: int, frame: bytes) -> None:
        with self.lock:
            self.frames.append((port, frame))

    def take(self) -> list[int]:
        with self.lock:
            ports = [p for p, _ in self.frames]
            self.frames.clear()
        return ports


def forwards_to(switch: Any, outputs: Outputs) -> list[int]:
    """Send one frame in on port 0; the ports it came out of."""
    outputs.take()
    switch.inject(0, FRAME)
    assert switch.wait_idle()
    return outputs.take()


@dataclass
class Rig:
    compiled: Any
    switch: Any
    client: Client
    outputs: Outputs
    port: int


@pytest.fixture(scope="module")
def running() -> Iterator[Rig]:
    """A live switch with its P4Runtime server on loopback, forwarding with program A pushed by a primary client."""
    from p4switch.server import P4RuntimeServer
    from p4switch.switch.core import Switch

    compiled = compile_text(program(1), "fwd_a")
    outputs = Outputs()
    switch = Switch()
    switch.add_output_callback(outputs)
    switch.start()
    server = P4RuntimeServer(switch, address="127.0.0.1:0").start()
    client = Client(f"127.0.0.1:{server.port}", election_id=1)
    try:
        assert code_name(client.arbitrate().arbitration.status.code) == "OK"
        client.set_pipeline(compiled.p4info, compiled.device_config_bytes())
        yield Rig(compiled, switch, client, outputs, server.port)
    finally:
        client.close()
        server.stop()
        switch.stop()


def config_json(**fields: Any) -> bytes:
    return json.dumps(fields).encode()


def good_fields(text: str, name: str = "fwd_a") -> dict[str, Any]:
    return {"format": dc.FORMAT, "name": name, "program": text,
            "program_sha256": hashlib.sha256(text.encode()).hexdigest(), "compiler": "p4ina"}


def refused(client: Client, p4info: Any, config: bytes) -> str:
    with pytest.raises(grpc.RpcError) as err:
        client.set_pipeline(p4info, config)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()
    return str(err.value.details())


def hostile_configs(canary: Path, program_a: str) -> list[tuple[str, bytes, str]]:
    """(what, config bytes, expected reason fragment)."""
    code = canary_code(canary)
    module = f"{code}\ndef build(rt):\n    {code}\n"
    cases: list[tuple[str, bytes, str]] = []
    for key, reason in (("format", "format"), ("name", "'name'"), ("program_sha256", "'program_sha256'"),
                        ("compiler", "'compiler'")):
        for text in (code, "x');import os;os.system('id')#"):  # long and short (under the 64-character caps)
            fields = good_fields(program_a)
            fields[key] = text
            cases.append((f"code in {key}", config_json(**fields), reason))
    code_program = f"{code}\n{program_a}"
    cases.append(("code as the program", config_json(**good_fields(code_program)), "does not compile"))
    cases.append(("code in a define", config_json(**good_fields(program_a), defines={"X": code, code[:60]: "1"}),
                  "'defines' has an invalid entry"))
    cases.append(("an unknown key holding code", config_json(**good_fields(program_a), build=module),
                  "unknown keys"))
    cases.append(("the old format", config_json(format="p4ina-v1model/1", name="fwd_a", python=module),
                  "old format"))
    cases.append(("python next to the new format", config_json(**good_fields(program_a), python=module),
                  "carried Python code"))
    include = f'#include "{canary.parent / "x.p4"}"\n{program_a}'
    cases.append(("an #include", config_json(**good_fields(include)), "preprocessing directives"))
    define = f"#define OUT_PORT 1\n{program_a}"
    cases.append(("a #define", config_json(**good_fields(define)), "preprocessing directives"))
    cases.append(("a sha256 that does not match", config_json(**{**good_fields(program_a),
                  "program_sha256": "0" * 64}), "does not match its program"))
    cases.append(("huge", b'{"format": "' + b"x" * (dc.MAX_CONFIG_BYTES + 1) + b'"}', "more than"))
    cases.append(("deeply nested list", b"[" * 200_000 + b"]" * 200_000, "nested too deeply"))
    nested = b'{"format": "p4ina-v1model/2", "defines": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_001
    cases.append(("deeply nested object", nested, "nested too deeply"))
    parens = "(" * 30_000 + "1" + ")" * 30_000
    deep_expr = program_a.replace("apply { fwd.apply(); }", f"apply {{ fwd.apply(); sm.egress_spec = (bit<9>) {parens}; }}")
    cases.append(("a P4 expression nested 30,000 deep", config_json(**good_fields(deep_expr)), "nested too deeply"))
    ifs = "if (sm.ingress_port == 1) { " * 150 + "sm.egress_spec = 2;" + " }" * 150
    deep_ifs = program_a.replace("apply { fwd.apply(); }", f"apply {{ fwd.apply(); {ifs} }}")
    cases.append(("150 nested ifs", config_json(**good_fields(deep_ifs)), "does not compile"))
    cases.append(("not JSON", code.encode(), "neither JSON nor a p4.tmp.P4DeviceConfig"))
    cases.append(("a wrapper holding garbage", dc.wrap(b"\x00garbage" + code.encode()), "not the embedded target"))
    cases.append(("a wrapper holding the old format", dc.wrap(config_json(format="p4ina-v1model/1", python=module)),
                  "old format"))
    cases.append(("garbage wire bytes", b"\x1a\xff\xff\xff\xff\x0f" + code.encode(), "P4DeviceConfig"))
    return cases


def test_hostile_configs_are_refused_and_the_switch_keeps_forwarding(running: Rig, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    assert forwards_to(running.switch, running.outputs) == [1]
    for what, config, reason in hostile_configs(canary, running.compiled.program_text):
        details = refused(running.client, running.compiled.p4info, config)
        assert reason in details, f"{what}: {details}"
        assert forwards_to(running.switch, running.outputs) == [1], what
    assert not canary.exists()


def test_a_p4info_of_another_program_is_refused(running: Rig) -> None:
    other = compile_text(program(2).replace("fwd", "fwd2"), "fwd_other")
    assert other.p4info != running.compiled.p4info
    assert "P4Info does not match" in refused(running.client, running.compiled.p4info, other.device_config_bytes())
    assert "P4Info does not match" in refused(running.client, other.p4info, running.compiled.device_config_bytes())
    assert forwards_to(running.switch, running.outputs) == [1]


EVIL_NAMES = r"""
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct h_t { eth_t eth; }
struct m_t { }
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(h.eth); transition accept; }
}
control V(inout h_t h, inout m_t m) { apply { } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    @name("t\"]\nCODE\nx = S.tables[\"t") table t {
        key = { sm.ingress_port: exact; } actions = { to; } default_action = to(4);
    }
    @name("c'].cells\nCODE #") register<bit<8>>(4) r;
    apply {
        t.apply();
        r.write(0, 1);
        log_msg("'); CODE; ('\n{}", {sm.ingress_port});
    }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { p.emit(h.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_names_that_would_break_out_of_generated_code_stay_string_literals(tmp_path: Path) -> None:
    """`@name` strings with quotes and newlines and a `log_msg` string holding code: the switch compiles the
    program, the names reach P4Info as written, the packets run (log_msg included) and no code runs."""
    canary = tmp_path / "canary"
    source = EVIL_NAMES.replace("CODE", canary_code(canary).replace('"', '\\"'))
    outputs = Outputs()
    with live_switch(source, "evil_names", on_output=outputs) as (compiled, switch, _client):
        names = [t.preamble.name for t in compiled.p4info.tables] + [r.preamble.name for r in compiled.p4info.registers]
        assert any("\n" in n and '"]' in n for n in names) and any("'].cells" in n for n in names)
        assert forwards_to(switch, outputs) == [4]
        assert switch.state.registers[compiled.p4info.registers[0].preamble.name].cells[0] == 1
    assert not canary.exists()


def test_the_wrapper_form_is_accepted_and_compiles_once(running: Rig) -> None:
    compiled, switch, client, outputs = running.compiled, running.switch, running.client, running.outputs
    other = compile_text(program(2), "fwd_b")
    before = device_loader.stats["compiled"] + device_loader.stats["disk"]
    client.set_pipeline(other.p4info, dc.wrap(other.device_config_bytes()))
    assert forwards_to(switch, outputs) == [2]
    client.set_pipeline(compiled.p4info, compiled.device_config_bytes())  # back to A: compiled when first pushed
    assert forwards_to(switch, outputs) == [1]
    client.set_pipeline(other.p4info, other.device_config_bytes())  # B again, raw JSON this time: cached
    assert forwards_to(switch, outputs) == [2]
    assert device_loader.stats["compiled"] + device_loader.stats["disk"] - before == 1
    client.set_pipeline(compiled.p4info, compiled.device_config_bytes())
    assert forwards_to(switch, outputs) == [1]


def test_p4runtime_shell_pushes_the_pipeline_from_files(running: Rig, tmp_path: Path) -> None:
    import p4runtime_sh.shell as sh
    p4info_path, config_path = write_outputs(compile_text(program(3), "fwd_c"), tmp_path)
    sh.setup(device_id=0, grpc_addr=f"127.0.0.1:{running.port}", election_id=(0, 2),
             config=sh.FwdPipeConfig(str(p4info_path), str(config_path)), verbose=False)
    try:
        assert forwards_to(running.switch, running.outputs) == [3]
    finally:
        sh.teardown()


def test_the_command_line_refuses_the_old_format_in_one_line(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    code = canary_code(canary)
    (tmp_path / "old.json").write_text(json.dumps({"format": "p4ina-v1model/1", "name": "old",
                                                  "python": f"{code}\ndef build(rt):\n    {code}\n"}))
    (tmp_path / "old.p4info.txtpb").write_text("")
    result = run_switch(["old.json", "--use-files", "0", "-i", "0@p0"], tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "old format" in result.stderr and "recompile" in result.stderr
    assert not canary.exists()
