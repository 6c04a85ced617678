"""p4c's v1model samples on the embedded target: share of .stf packet tests passed and of P4Info files equal to p4c's.

Issue 16's third criterion. The data is p4c's public testdata, fetched by hand into a folder laid out as p4c's
(`p4_16_samples/NAME.p4`, `NAME.stf`, included files; `p4_16_samples_outputs/NAME.p4.p4info.txtpb`) and never
committed here. Beside them, `fetch.json` records what the fetch saw: `frame` (the .stf file names listed, in
p4c's folder, then those found by looking a path up past the listing's cap, also under `frame_looked_up`), `absent`
(paths looked up that the index does not have), `unusable` (path -> why: truncated, or an older format or
program than p4c tests today) and `program_from_outputs` (program path -> the p4c file and commit it was read from,
where the stored sample was older than its .stf or P4Info and p4c's own print of the program at a later commit,
`p4_16_samples_outputs/NAME.p4`, was stored: p4test's `--pp` output, the parsed source before type checking).

The sample: every `-bmv2` .stf of the frame (not ebpf/ubpf/psa/pna/tc/dpdk), sorted, shuffled with `--seed`;
the packet set is the first `--count` v1model programs (a program that does not include v1model.p4 is skipped).
The P4Info set is drawn the same way from those names and the P4Info outputs `fetch.json` lists
(`p4info_listed`): the first `--count` v1model programs, in the seeded order, that have a P4Info output. Unusable or unfetched data
counts in neither numerator nor denominator, and is listed. Each failure is classified by its first error.

Where the folder also holds p4c's `p4_16_bmv_errors/` (and `_outputs/`), the JSON gets an `errors` category too:
p4c's BMv2 back-end error tests, measured by `bench/p4c_errors.py` (rejected, same first error location, same
wording).

    python -m bench.p4c_samples /tmp/p4c-testdata --out p4c_samples.json [--seed 16] [--count 50]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import traceback
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import p4c_errors
from bench._p4c_stf import StfError, compare_outputs, parse_stf, run_stf

DEFAULT_DATA = Path(os.environ.get("P4C_TESTDATA", "/tmp/p4c-testdata"))
INCLUDE = Path(__file__).resolve().parents[1] / "p4switch" / "include"
EXCLUDED = re.compile(r"ebpf|ubpf|psa|pna|dpdk|(^|[-_])tc([-_]|$)")


@dataclass
class Verdict:
    """One sample's result in one set. `verdict`: pass, fail or excluded; `kind` classifies a failure or exclusion;
    `first_error` is its first line."""

    verdict: str
    kind: str = ""
    first_error: str = ""


def _eligible(name: str) -> bool:
    return "/" not in name and not EXCLUDED.search(name)


def candidates(frame: list[str], seed: int) -> list[str]:
    """The frame's v1model-looking -bmv2 samples (names without .stf), sorted then shuffled with `seed`."""
    names = sorted({n[:-len(".stf")] for n in frame if n.endswith("-bmv2.stf") and _eligible(n)})
    random.Random(seed).shuffle(names)
    return names


def p4info_candidates(frame: list[str], p4info_listed: list[str], seed: int) -> list[str]:
    """The programs the P4Info set is drawn from: the packet frame's and every listed P4Info output's (names),
    sorted then shuffled with `seed`."""
    names = sorted(set(candidates(frame, seed)) | {n for n in p4info_listed if _eligible(n)})
    random.Random(seed).shuffle(names)
    return names


class Testdata:
    """A p4c-style testdata folder and its `fetch.json`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        meta_path = root / "fetch.json"
        self.meta: dict[str, Any] = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        self.absent = set(self.meta.get("absent", []))
        self.unusable: dict[str, str] = dict(self.meta.get("unusable", {}))
        #: programs seen at fetch time to be for another architecture (not copied here)
        self.not_v1model: dict[str, str] = dict(self.meta.get("not_v1model", {}))

    def frame(self) -> list[str]:
        listed = self.meta.get("frame")
        return list(listed) if listed else sorted(p.name for p in (self.root / "p4_16_samples").glob("*.stf"))

    def rel(self, name: str, what: str) -> str:
        return {"p4": f"p4_16_samples/{name}.p4", "stf": f"p4_16_samples/{name}.stf",
                "p4info": f"p4_16_samples_outputs/{name}.p4.p4info.txtpb"}[what]

    def state(self, name: str, what: str) -> str:
        """present, absent (not in the index), unusable or unfetched."""
        rel = self.rel(name, what)
        if rel in self.unusable:
            return "unusable"
        if (self.root / rel).exists():
            return "present"
        listed = self.meta.get("p4info_listed")
        if rel in self.absent or (what == "p4info" and listed is not None and name not in listed):
            return "absent"
        return "unfetched"

    def v1model(self, name: str) -> bool | None:
        """Whether the program is for v1model: from its includes, else from its P4Info's arch; None if unknown."""
        if name in self.not_v1model:
            return False
        if self.state(name, "p4") == "present":
            return is_v1model(self.text(name, "p4"))
        if self.state(name, "p4info") == "present":
            return 'arch: "v1model"' in self.text(name, "p4info")
        return None

    def text(self, name: str, what: str) -> str:
        return (self.root / self.rel(name, what)).read_text()

    def program_text(self, name: str) -> str:
        """The program with the files it includes by `#include "..."` (one level, as the samples use)."""
        text = self.text(name, "p4")
        folder = self.root / "p4_16_samples"
        for inc in re.findall(r'#include\s+"([^"]+)"', text):
            if (folder / inc).exists():
                text += "\n" + (folder / inc).read_text()
        return text


def programs_from_outputs(meta: dict[str, Any], names: list[str]) -> dict[str, str]:
    """Which of `names` are measured on p4c's printed program rather than the sample file (`fetch.json`'s
    `program_from_outputs`), as name -> `path@commit`, so a reader can tell the two apart."""
    recorded: dict[str, dict[str, str]] = meta.get("program_from_outputs", {})
    out = {}
    for name in names:
        source = recorded.get(f"p4_16_samples/{name}.p4")
        if source is not None:
            out[name] = f"{source['path']}@{source['commit']}"
    return out


def first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[0] if lines else text.strip()


def p4info_diff(got: str, want: str) -> str | None:
    """The first differing line of two P4Info texts (1-based, as `got` / `want`), or None when equal."""
    if got == want:
        return None
    a, b = got.splitlines(), want.splitlines()
    for i, (x, y) in enumerate(zip(a, b, strict=False), 1):
        if x != y:
            return f"line {i}: got {x.strip()!r}, p4c has {y.strip()!r}"
    if len(a) != len(b):
        n = min(len(a), len(b)) + 1
        extra = (a[n - 1] if len(a) > len(b) else b[n - 1]).strip()
        return f"line {n}: {'only ours' if len(a) > len(b) else 'only p4c'} has {extra!r}"
    return "texts differ in line endings or trailing whitespace"


def p4info_format_problem(text: str) -> str | None:
    """Why a stored P4Info is not comparable with what the reference p4c writes (None when it is). Decided from the
    file alone, never from our output."""
    if not text.rstrip().endswith("}") and "\n" in text.strip():
        return "truncated (does not end with a closing brace)"
    if "pkg_info" not in text:
        return "older P4Info format (no pkg_info { arch } block)"
    if "initial_default_action_id" in text:
        return "older P4Info format (initial_default_action_id)"
    tables = text.split("\ntables {")[1:]
    if any("initial_default_action {" not in t.split("\nactions {")[0] for t in tables):
        return "older P4Info format (a table without initial_default_action)"
    if '"@corelib"' in text:
        return ("another p4c version than the reference 1.2.5.16, whose P4Info has no @corelib annotations "
                "(../shared/conformance/p4info)")
    return None


def p4info_program_mismatch(p4info: str, program: str) -> str | None:
    """Why a stored P4Info cannot be p4c's output for the stored program (the two were stored from different p4c
    versions), or None. Only facts readable in both files: the P4Info's object names occur in the program, and
    const default actions and initial entries have their keywords there."""
    for name in re.findall(r'preamble \{\s+id: \d+\s+name: "([^"]+)"', p4info):
        last = name.rsplit(".", 1)[-1]
        if last != "NoAction" and re.search(rf"\b{re.escape(last)}\b", program) is None:
            return f"P4Info names {name!r}, which the program does not declare"
    if "has_initial_entries: true" in p4info and "entries" not in program:
        return "P4Info has initial entries (has_initial_entries), the program none"
    if "const_default_action_id" in p4info and re.search(r"const\s+default_action", program) is None:
        return "P4Info has a const default action, the program none"
    return None


def is_v1model(program: str) -> bool:
    return re.search(r"#\s*include\s*[<\"]v1model\.p4[>\"]", program) is not None


def compile_sample(data: Testdata, name: str) -> tuple[Any | None, str]:
    """Our compiler on the sample; (compiled program, "") or (None, first error line)."""
    from p4switch.compiler import compile_file

    try:
        return compile_file(data.root / data.rel(name, "p4"), include_dirs=[str(INCLUDE)]), ""
    except Exception as exc:  # CompileError, or any crash: both are the compiler's miss, classified by message
        kind = type(exc).__name__
        message = first_line(str(exc)) or kind
        return None, message if kind == "CompileError" else f"{kind}: {message}"


def packet_verdict(data: Testdata, name: str, compiled: Any | None, compile_error: str) -> Verdict:
    if compiled is None:
        return Verdict("fail", "compile error", compile_error)
    try:
        test = parse_stf(data.text(name, "stf"))
    except StfError as exc:
        return Verdict("excluded", "data unusable", f".stf unreadable: {exc}")
    try:
        run = run_stf(compiled, test)
    except Exception as exc:  # the switch failed to build or run the program
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return Verdict("fail", "switch error", f"{type(exc).__name__}: {first_line(str(exc))} ({where.name})")
    if run.command_error:
        return Verdict("fail", "stf command failed", run.command_error)
    mismatch = compare_outputs(test, run.outputs)
    return Verdict("fail", "packet mismatch", mismatch) if mismatch else Verdict("pass")


def p4info_verdict(data: Testdata, name: str, compiled: Any | None, compile_error: str) -> Verdict:
    want = data.text(name, "p4info")
    problem = p4info_format_problem(want) or p4info_program_mismatch(want, data.program_text(name))
    if problem:
        return Verdict("excluded", "data unusable", problem)
    if compiled is None:
        return Verdict("fail", "compile error", compile_error)
    diff = p4info_diff(compiled.p4info_text(), want)
    return Verdict("fail", "p4info diff", diff) if diff else Verdict("pass")


def summarise(results: dict[str, Verdict]) -> dict[str, Any]:
    passed = sum(v.verdict == "pass" for v in results.values())
    usable = sum(v.verdict != "excluded" for v in results.values())
    classes = Counter(v.kind for v in results.values() if v.verdict == "fail")
    examples = {k: next(f"{n}: {v.first_error}" for n, v in results.items() if v.kind == k and v.verdict == "fail")
                for k in classes}
    excluded = {n: f"{v.kind}: {v.first_error}" for n, v in results.items() if v.verdict == "excluded"}
    # programs judged too old for today's p4c count as failures here: the strict reading of the criterion
    stale = sum(v.kind == "program unusable" for v in results.values())
    return {"passed": passed, "usable": usable, "ratio": round(passed / usable, 4) if usable else None,
            "stale_programs": stale,
            "strict_ratio": round(passed / (usable + stale), 4) if usable + stale else None,
            "failure_classes": dict(classes.most_common()), "examples": examples, "excluded": excluded,
            "compile_errors": dict(Counter(v.first_error for v in results.values()
                                           if v.kind == "compile error").most_common()),
            "samples": {n: asdict(v) for n, v in results.items()}}


def stale_test_counts(results: dict[str, Verdict], part: dict[str, Any]) -> dict[str, Any]:
    """The strictest reading for packet tests: `.stf` files recorded unusable (older than BMv2 or than every stored
    version of their program) count as failures too, beside the stale programs. Not done for P4Info, whose unusable
    files are mostly p4c's older output formats, not tests the target could fail."""
    stale_stf = sum(v.kind == "data unusable" and v.first_error.split(":")[0].endswith(".stf")
                    for v in results.values())
    total = part["usable"] + part["stale_programs"] + stale_stf
    return {"stale_stf": stale_stf, "ratio_counting_stale_stf": round(part["passed"] / total, 4) if total else None}


def measure(root: Path, *, seed: int = 16, count: int = 50) -> dict[str, Any]:
    data = Testdata(root)
    order = candidates(data.frame(), seed)
    packet_set: list[str] = []
    skipped: dict[str, str] = {}
    for name in order:
        if data.v1model(name) is False:
            skipped[name] = f"not a v1model program{': ' + data.not_v1model[name] if name in data.not_v1model else ''}"
        elif len(packet_set) < count:
            packet_set.append(name)
    p4info_order = p4info_candidates(data.frame(), data.meta.get("p4info_listed", []), seed)
    p4info_set: list[str] = []
    for name in p4info_order:
        if len(p4info_set) == count:
            break
        if data.state(name, "p4info") == "absent":
            continue
        if data.v1model(name) is False:
            skipped[name] = f"not a v1model program{': ' + data.not_v1model[name] if name in data.not_v1model else ''}"
            continue
        p4info_set.append(name)
    compiled: dict[str, tuple[Any | None, str]] = {}

    def compile_once(name: str) -> tuple[Any | None, str]:
        if name not in compiled:
            compiled[name] = compile_sample(data, name)
        return compiled[name]

    def excluded(name: str, need: tuple[str, ...]) -> Verdict | None:
        for what in need:
            state = data.state(name, what)
            if state == "unusable":
                kind = "program unusable" if what == "p4" else "data unusable"
                return Verdict("excluded", kind, f"{data.rel(name, what)}: {data.unusable[data.rel(name, what)]}")
            if state != "present":
                return Verdict("excluded", "not fetched" if state == "unfetched" else "not in the index",
                               data.rel(name, what))
        return None

    packets: dict[str, Verdict] = {}
    for name in packet_set:
        packets[name] = excluded(name, ("p4", "stf")) or packet_verdict(data, name, *compile_once(name))
    infos: dict[str, Verdict] = {}
    for name in p4info_set:
        infos[name] = excluded(name, ("p4info", "p4")) or p4info_verdict(data, name, *compile_once(name))
    packet_part, p4info_part = summarise(packets), summarise(infos)
    packet_part.update(stale_test_counts(packets, packet_part))
    errors = p4c_errors.measure(root) if (root / p4c_errors.FOLDER).is_dir() else None
    return {
        "what": "p4c v1model samples on the embedded target (issue 16): .stf packet tests and P4Info files",
        "summary": {f"{key}_{field}": part[field] for key, part in (("stf", packet_part), ("p4info", p4info_part))
                    for field in ("passed", "usable", "ratio", "strict_ratio")},
        "testdata": str(root), "seed": seed, "count": count,
        "frame": data.frame(), "frame_note": data.meta.get("frame_note", ""),
        "order": order, "p4info_order": p4info_order, "skipped": skipped,
        "programs_from_outputs": programs_from_outputs(data.meta, sorted(set(packet_set) | set(p4info_set))),
        "packet_tests": {"sample": packet_set, **packet_part},
        "p4info": {"sample": p4info_set, **p4info_part},
        **({"errors": errors} if errors is not None else {}),
    }


def unavailable() -> str | None:
    """`p4ina bench` runs this only where p4c's testdata was fetched (it is never committed here)."""
    if not (DEFAULT_DATA / "p4_16_samples").is_dir():
        return f"p4c's testdata is not in {DEFAULT_DATA} (set P4C_TESTDATA; docs/compiler.md, 'p4c's samples')"
    return None


def run(quick: bool) -> dict[str, Any]:
    return measure(DEFAULT_DATA)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("testdata", type=Path, help="folder laid out like p4c's testdata")
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--count", type=int, default=50)
    args = parser.parse_args(argv)
    result = measure(args.testdata, seed=args.seed, count=args.count)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for key in ("packet_tests", "p4info"):
        part = result[key]
        also = (f"; {part['ratio_counting_stale_stf']} counting {part['stale_stf']} stale .stf too"
                if "stale_stf" in part else "")
        print(f"{key}: {part['passed']}/{part['usable']} passed ({part['ratio']}; {part['strict_ratio']} counting "
              f"{part['stale_programs']} stale programs as failures{also}); excluded {len(part['excluded'])}; "
              f"failures {part['failure_classes']}")
    if "errors" in result:
        print(p4c_errors.describe(result["errors"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
