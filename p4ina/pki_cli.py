"""`p4ina certs`: make a throwaway CA and certificates for a fabric's P4Runtime ports (see p4ina/pki.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("certs", help="make a throwaway CA and TLS certificates for switches and controllers")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the PEM files")
    p.add_argument("--switch", action="append", default=[], metavar="NAME[=ADDR,...]",
                   help="a switch and the extra names/addresses it is reached by; repeatable")
    p.add_argument("--client", action="append", default=[], metavar="NAME",
                   help="a client identity (default: controller); repeatable")
    p.add_argument("--days", type=int, default=7, help="validity in days (default 7)")
    p.add_argument("--json", action="store_true", help="print the file paths as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from p4ina.pki import make_fabric_pki

    switches: dict[str, list[str]] = {}
    for spec in args.switch or ["switch"]:
        name, _, addrs = spec.partition("=")
        if not name:
            print(f"p4ina certs: bad --switch {spec!r}: expected NAME[=ADDR,...]", file=sys.stderr)
            return 2
        switches[name] = [a for a in addrs.split(",") if a]
    try:
        pki = make_fabric_pki(args.out, switches, args.client or ["controller"], days=args.days)
    except (OSError, ValueError) as exc:
        print(f"p4ina certs: {exc}", file=sys.stderr)
        return 1
    paths = {"ca": str(pki.ca_cert),
             "servers": {n: {"cert": str(c.cert), "key": str(c.key)} for n, c in pki.servers.items()},
             "clients": {n: {"cert": str(c.cert), "key": str(c.key)} for n, c in pki.clients.items()}}
    print(json.dumps(paths, indent=2) if args.json else f"wrote CA and {len(pki.servers) + len(pki.clients)} "
          f"certificates to {args.out}")
    return 0
