"""`p4ina compile PROGRAM.p4 [-o DIR] [-I DIR] [-D NAME[=VALUE]]`: P4Info + device config for the embedded switch.

Diagnostics go to stderr as `file:line:col: error: ...` with the offending line; the exit status is 1 on any error
and a Python traceback is never shown for a bad program.
"""

from __future__ import annotations

import argparse
import sys

from p4switch.exceptions import CompileError, P4SwitchError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("compile", help="compile a P4_16 v1model program for the embedded switch",
                              description="Compile a P4_16 v1model program: writes DIR/<name>.p4info.txtpb (P4Info as "
                                          "p4c writes it) and DIR/<name>.json (the embedded switch's device config).")
    p.add_argument("program", metavar="PROGRAM.p4")
    p.add_argument("-o", "--output", default=".", metavar="DIR", help="output directory (default: .)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add a directory to the #include search path")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a preprocessor macro")
    p.set_defaults(handler=run)


def parse_defines(items: list[str]) -> dict[str, str | None]:
    defines: dict[str, str | None] = {}
    for item in items:
        name, sep, value = item.partition("=")
        defines[name] = value if sep else None
    return defines


def run(args: argparse.Namespace) -> int:
    from p4switch.compiler import compile_file, write_outputs

    try:
        compiled = compile_file(args.program, include_dirs=tuple(args.include_dirs),
                                defines=parse_defines(args.defines))
        p4info_path, config_path = write_outputs(compiled, args.output)
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
    print(f"wrote {p4info_path} and {config_path}")
    return 0
