"""`p4ina compile` (and `p4ina-p4c-bm2-ss`): P4Info + device config for the embedded switch, with p4c's flags.

    p4ina compile prog.p4 -o build                     # build/prog.p4info.txtpb and build/prog.json
    p4ina-p4c-bm2-ss --p4v 16 --p4runtime-files build/prog.p4.p4info.txtpb -o build/prog.json prog.p4
    p4ina compile --target bmv2 --arch v1model --p4runtime-file x.p4info --p4runtime-format text -o b prog.p4

`-o` ending in `.json` names the device config file (as p4c-bm2-ss's `-o`); anything else is a directory (as the
`p4c` driver's). P4Runtime files get the format p4c gives them (`p4info_files.py`). Diagnostics go to stderr as
`file:line:col: error: ...` with the offending line; the exit status is 1 on any error and a Python traceback is
never shown for a bad program.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from p4switch.exceptions import CompileError, P4SwitchError

if TYPE_CHECKING:
    from p4switch.compiler import CompiledProgram

P4C_ALIAS = "p4ina-p4c-bm2-ss"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("compile", help="compile a P4_16 v1model program for the embedded switch",
                              description="Compile a P4_16 v1model program: writes DIR/<name>.p4info.txtpb (P4Info as "
                                          "p4c writes it) and DIR/<name>.json (the embedded switch's device config). "
                                          "Accepts p4c-bm2-ss's flags.")
    add_arguments(p)
    p.set_defaults(handler=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of `p4ina compile`, shared with the `p4ina-p4c-bm2-ss` console script."""
    p.add_argument("program", metavar="PROGRAM.p4")
    p.add_argument("-o", "--output", default=".", metavar="DIR|FILE.json",
                   help="output directory (default: .), or the device config file when it ends in .json")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add a directory to the #include search path")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a preprocessor macro")
    p.add_argument("--p4v", choices=("16", "14"), default="16", help="language version (only 16 is supported)")
    p.add_argument("--std", choices=("p4-16", "p4_16", "p4-14", "p4_14"), default=None,
                   help="language standard, p4c's other spelling of --p4v")
    p.add_argument("--target", default="bmv2", help="accepted for p4c compatibility; only bmv2 (v1model) is built")
    p.add_argument("--arch", default="v1model", help="accepted for p4c compatibility; only v1model is supported")
    p.add_argument("--p4runtime-files", metavar="F[,F...]", default=None,
                   help="also write the P4Info to each file; the suffix picks the format (.txt/.txtpb text, "
                        ".json JSON, .bin binary)")
    p.add_argument("--p4runtime-file", metavar="FILE", default=None,
                   help="older p4c spelling: write the P4Info to FILE in --p4runtime-format")
    p.add_argument("--p4runtime-format", choices=("binary", "json", "text"), default="binary",
                   help="format of --p4runtime-file (default binary, as p4c)")


def parse_defines(items: list[str]) -> dict[str, str | None]:
    defines: dict[str, str | None] = {}
    for item in items:
        name, sep, value = item.partition("=")
        defines[name] = value if sep else None
    return defines


def check_options(args: argparse.Namespace) -> None:
    """Refuse, with p4c-like one-line errors, the language versions and targets this compiler does not build."""
    if args.p4v == "14" or (args.std or "").endswith("14"):
        raise P4SwitchError("P4_14 programs are not supported (only P4_16: --p4v 16)")
    if args.target != "bmv2":
        raise P4SwitchError(f"--target {args.target}: only bmv2 is supported (the embedded v1model switch)")
    if args.arch != "v1model":
        raise P4SwitchError(f"--arch {args.arch}: only v1model is supported")


def p4runtime_outputs(args: argparse.Namespace) -> list[tuple[Path, str]]:
    """(file, format) pairs for the P4Info, as p4c computes them: `--p4runtime-file` first, then each of
    `--p4runtime-files` by its suffix. Checked before compiling, so a bad name fails fast."""
    from p4switch.p4info_files import format_for, split_file_list

    outputs: list[tuple[Path, str]] = []
    if args.p4runtime_file:
        outputs.append((Path(args.p4runtime_file), args.p4runtime_format))
    if args.p4runtime_files:
        outputs.extend((Path(name), format_for(name)) for name in split_file_list(args.p4runtime_files))
    return outputs


def write_all(compiled: CompiledProgram, output: str, extra: list[tuple[Path, str]]) -> list[Path]:
    """Write the device config (and our `<name>.p4info.txtpb` where the switch looks first), then the P4Runtime
    files. `-o FILE.json`: the config is that file; its sidecar P4Info is written only when no P4Runtime file was
    asked for (the switch also finds `FILE.p4.p4info.txtpb` and the like, see p4info_files.p4info_candidates)."""
    from p4switch.compiler import write_outputs
    from p4switch.p4info_files import write_p4info

    written: list[Path] = []
    if output.endswith(".json"):
        config_path = Path(output)
        config_path.parent.mkdir(parents=True, exist_ok=True)
        config_path.write_bytes(compiled.device_config_bytes())
        written.append(config_path)
        if not extra:
            written.append(write_p4info(compiled.p4info, config_path.with_name(config_path.stem + ".p4info.txtpb")))
    else:
        written.extend(write_outputs(compiled, output))
    for path, fmt in extra:
        written.append(write_p4info(compiled.p4info, path, fmt))
    return written


def run(args: argparse.Namespace) -> int:
    from p4switch.compiler import compile_file

    quiet = getattr(args, "quiet", False)
    try:
        check_options(args)
        extra = p4runtime_outputs(args)
        compiled = compile_file(args.program, include_dirs=tuple(args.include_dirs),
                                defines=parse_defines(args.defines))
        written = write_all(compiled, args.output, extra)
    except CompileError as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic.render(), file=sys.stderr)
        return 1
    except P4SwitchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {exc.filename or args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a compiler bug must still end in one line, never a traceback
        print(f"{args.program}: internal compiler error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if not quiet:
        print(f"wrote {' and '.join(str(p) for p in written)}")
    return 0


def main_p4c_bm2_ss(argv: Sequence[str] | None = None) -> int:
    """Console script `p4ina-p4c-bm2-ss`: `p4ina compile` under a name a Makefile can use as P4C. Silent on
    success, as p4c-bm2-ss is."""
    parser = argparse.ArgumentParser(prog=P4C_ALIAS, description="p4c-bm2-ss's command line, compiling for the "
                                     "embedded p4ina switch (`p4ina compile`).")
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.quiet = True
    return run(args)


if __name__ == "__main__":
    sys.exit(main_p4c_bm2_ss())
