"""p4c's BMv2 back-end error tests on the embedded compiler: does `p4ina compile` reject what p4c-bm2-ss rejects,
at the same place, with the same words?

Issue 16's second criterion, measured on p4c's own list: `testdata/p4_16_bmv_errors/*-bmv2.p4` (its README: every
test there must fail to compile) and the expected messages in `p4_16_bmv_errors_outputs/NAME-stderr`, fetched by hand
into a folder laid out as p4c's and never committed here. Beside them `bmv_errors_fetch.json` records the fetch:
`frame` (the .p4 names listed in p4c's folder) and `absent` (outputs the index does not hold).

For each program: rejected at all; then, where p4c's stderr is present, its first error (warnings skipped; the
"N errors encountered" trailer is not one) against our first diagnostic:

* location: file name, line and column. p4c prints the preprocessed line under the message (runs of blanks
  collapsed, nested lines indented by two), so its caret column is mapped back to the source line by counting the
  non-blank characters before it. A type error whose headline is `v1model.p4(N): 'package V1Switch'` is compared
  by its `---- Actual error:` part, the first line that points into the program.
* message: the text after `error:`, with file paths reduced to their names and trailing blanks dropped.

A stored stderr can come from another version of the program than the stored .p4 (the index keeps one version of
each file). When the line p4c quotes is not the program's line at that number, the output is marked `stale` with
both lines as evidence; if the quoted line occurs exactly once elsewhere (a license header added above it), the
location is compared there (`relocated`), else neither location nor message is compared.

    python -m bench.p4c_errors /tmp/p4c-testdata --out p4c_errors.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

INCLUDE = Path(__file__).resolve().parents[1] / "p4switch" / "include"
FOLDER, OUTPUTS = "p4_16_bmv_errors", "p4_16_bmv_errors_outputs"

_HEAD = re.compile(r"^(?:(?P<file>[^\s()][^()]*)\((?P<line>\d+)\):\s)?(?:\[--W(?:error|warn)=[^\]]*\]\s)?"
                   r"(?P<kind>error|warning):\s?(?P<message>.*)$")
_PLACE = re.compile(r"^\s*(?P<file>[^\s()][^()]*)\((?P<line>\d+)\)(?::\s(?P<message>.*))?$")
_TRAILER = re.compile(r"^\d+ errors? encountered, aborting compilation$")


@dataclass
class Place:
    """One location p4c printed: `file(line)`, the source line it quoted and the caret column in that quote."""

    file: str
    line: int
    quoted: str = ""
    caret: int = 0  # 1-based column of the first '^' in p4c's quote; 0 when none

    def where(self) -> str:
        return f"{self.file}({self.line})"


@dataclass
class P4cError:
    """p4c's first error: where and what (the headline, or its `Actual error` part)."""

    place: Place | None
    message: str
    headline: str


@dataclass
class Outcome:
    """One program: p4c's and our first error, and how they compare."""

    rejected: bool
    ours: str = ""
    ours_location: str = ""
    p4c: str = ""
    p4c_location: str = ""
    same_location: bool | None = None
    same_message: bool | None = None
    stale: str = ""  # evidence that the stderr is from another version of the program
    relocated: bool = False
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def parse_stderr(text: str) -> list[tuple[str, str, list[str]]]:
    """p4c's stderr as (kind, headline, body lines) per diagnostic."""
    out: list[tuple[str, str, list[str]]] = []
    for line in text.splitlines():
        m = _HEAD.match(line)
        if m:
            out.append((m.group("kind"), line, []))
        elif out:
            out[-1][2].append(line)
    return out


def _quote(body: list[str], i: int) -> tuple[str, int]:
    """The quoted source line at body[i] and the caret column under it (0 when no caret line follows)."""
    if i < len(body) and i + 1 < len(body) and "^" in body[i + 1] and not body[i + 1].strip().strip("^"):
        return body[i], body[i + 1].index("^") + 1
    return "", 0


def first_error(text: str) -> P4cError | None:
    """The first error of a p4c stderr; for a type error's `---- Actual error:` block, that part's place and
    message."""
    for kind, headline, body in parse_stderr(text):
        m = _HEAD.match(headline)
        assert m is not None
        message = m.group("message").rstrip()
        if kind != "error" or (m.group("file") is None and _TRAILER.match(message)):
            continue
        quoted, caret = _quote(body, 0)
        place = Place(Path(m.group("file")).name, int(m.group("line")), quoted, caret) if m.group("file") else None
        if "  ---- Actual error:" in body:
            i = body.index("  ---- Actual error:") + 1
            pm = _PLACE.match(body[i]) if i < len(body) else None
            if pm and pm.group("message"):
                quoted, caret = _quote(body, i + 1)
                return P4cError(Place(Path(pm.group("file")).name, int(pm.group("line")), quoted, caret),
                                normalise(pm.group("message")), headline)
        return P4cError(place, normalise(message), headline)
    return None


def normalise(message: str) -> str:
    """File paths reduced to their names (`/x/y/prog.p4(3)` -> `prog.p4(3)`), trailing blanks dropped."""
    return re.sub(r"(?:[^\s()'\"]*/)+([^\s/()'\"]+\.p4)", r"\1", message).rstrip()


def _blankless(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def source_column(quoted: str, caret: int, source: str) -> int:
    """p4c's caret column in its quote, as a column of the source line: the same count of non-blank characters
    before it (p4c quotes the preprocessed line, blanks collapsed)."""
    before = sum(1 for ch in quoted[:caret - 1] if not ch.isspace())
    seen = 0
    for i, ch in enumerate(source):
        if ch.isspace():
            continue
        if seen == before:
            return i + 1
        seen += 1
    return len(source) + 1


def expected_location(err: P4cError, program: str, name: str) -> tuple[tuple[str, int, int] | None, str, bool]:
    """(file, line, column) to compare with ours, evidence of staleness (empty if none), relocated."""
    place = err.place
    if place is None:
        return None, "", False
    if place.file != name or not place.quoted:
        return (place.file, place.line, place.caret), "", False
    lines = program.splitlines()
    actual = lines[place.line - 1] if 0 < place.line <= len(lines) else ""
    if _blankless(actual) == _blankless(place.quoted):
        return (place.file, place.line, source_column(place.quoted, place.caret, actual)), "", False
    evidence = (f"p4c's stderr quotes line {place.line} as {place.quoted.strip()!r}; the stored program's line "
                f"{place.line} is {actual.strip()!r}")
    hits = [i for i, ln in enumerate(lines, 1) if _blankless(ln) == _blankless(place.quoted)]
    if len(hits) == 1:
        return (place.file, hits[0], source_column(place.quoted, place.caret, lines[hits[0] - 1])), \
            evidence + f" (found once, at line {hits[0]})", True
    return None, evidence + " (not found once elsewhere)", False


def compile_errors(path: Path) -> list[Any]:
    """Our compiler's diagnostics for the program (empty when it compiles), as `p4ina compile` runs it."""
    from p4switch.compiler import compile_file
    from p4switch.exceptions import CompileError, Diagnostic, SourceLocation

    try:
        compile_file(path, include_dirs=[str(INCLUDE)])
    except CompileError as exc:
        return list(exc.diagnostics)
    except Exception as exc:  # a crash is a rejection too, but never a match
        return [Diagnostic(SourceLocation(str(path), 0, 0), f"crash: {type(exc).__name__}: {exc}")]
    return []


def judge(name: str, program: str, stderr: str | None, diagnostics: list[Any]) -> Outcome:
    out = Outcome(rejected=bool(diagnostics))
    if diagnostics:
        d = diagnostics[0]
        out.ours = normalise(d.message)
        out.ours_location = f"{Path(d.location.file).name}:{d.location.line}:{d.location.column}"
    if stderr is None:
        out.note = "p4c's stderr not in the index: rejection only"
        return out
    err = first_error(stderr)
    if err is None:
        out.note = "p4c's stderr has no error"
        return out
    out.p4c = err.message
    where, out.stale, out.relocated = expected_location(err, program, name)
    if where is not None:
        out.p4c_location = f"{where[0]}:{where[1]}:{where[2]}"
    if out.stale and not out.relocated:
        out.note = "stale stderr: location and message not compared"
        return out
    if diagnostics:
        out.same_location = out.p4c_location == out.ours_location
        out.same_message = out.p4c == out.ours
    else:
        out.same_location = out.same_message = False
    return out


def frame(root: Path) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """The programs measured and those left out (with why): p4c's folder listing, `*-bmv2.p4` only."""
    meta_path = root / "bmv_errors_fetch.json"
    meta: dict[str, Any] = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    names = list(meta.get("frame") or sorted(p.name for p in (root / FOLDER).glob("*.p4")))
    left: dict[str, str] = {}
    keep = []
    for n in names:
        if not n.endswith("-bmv2.p4"):
            left[n] = "not a test of the folder: its README says every test is named *-bmv2.p4"
        elif not (root / FOLDER / n).exists():
            left[n] = "program not fetched"
        else:
            keep.append(n)
    return keep, left, meta


def measure(root: Path) -> dict[str, Any]:
    names, left, meta = frame(root)
    results: dict[str, Outcome] = {}
    for n in names:
        program = (root / FOLDER / n).read_text()
        out_path = root / OUTPUTS / f"{n}-stderr"
        stderr = out_path.read_text() if out_path.exists() else None
        results[n] = judge(n, program, stderr, compile_errors(root / FOLDER / n))
    compared = {n: o for n, o in results.items() if o.same_location is not None}
    summary = {
        "programs": len(results),
        "rejected": sum(o.rejected for o in results.values()),
        "with_stderr": sum(o.note != "p4c's stderr not in the index: rejection only" for o in results.values()),
        "stale": sum(bool(o.stale) for o in results.values()),
        "relocated": sum(o.relocated for o in results.values()),
        "compared": len(compared),
        "same_location": sum(bool(o.same_location) for o in compared.values()),
        "same_message": sum(bool(o.same_message) for o in compared.values()),
        "same_both": sum(bool(o.same_location and o.same_message) for o in compared.values()),
    }
    return {
        "what": "p4c's p4_16_bmv_errors tests on the embedded compiler (issue 16): rejected, same first error "
                "location, same wording",
        "testdata": str(root), "summary": summary,
        "left_out": left, "absent": meta.get("absent", []), "xfails": meta.get("xfails", ""),
        "misses": {n: f"ours {o.ours_location} {o.ours!r}; p4c {o.p4c_location} {o.p4c!r}"
                   for n, o in compared.items() if not (o.same_location and o.same_message)},
        "programs": {n: asdict(o) for n, o in results.items()},
    }


def describe(result: dict[str, Any]) -> str:
    s = result["summary"]
    return (f"errors: rejected {s['rejected']}/{s['programs']}; of {s['compared']} with a comparable p4c stderr "
            f"({s['with_stderr']} stored, {s['stale']} stale of which {s['relocated']} relocated): same location "
            f"{s['same_location']}, same message {s['same_message']}, both {s['same_both']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("testdata", type=Path, help="folder laid out like p4c's testdata")
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    result = measure(args.testdata)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(describe(result))
    for n, why in result["misses"].items():
        print(f"  miss {n}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
