"""`p4ina run` and `p4ina demo`: emulated-cluster runs on Mininet fabrics of P4 switches.

    p4ina run --topo leafspine,2,2,2 --size 1048576 --out runs/ls [--json] [--target embedded|bmv2|auto]
    p4ina run --topo fattree,4 --size 65536 --out runs/ft --loss 2 --kill-switch core1@1.5
    p4ina run --topo leafspine,2,1,2 --out runs/cmp --mode ring --mode gloo --mode innet --fmt int32 --fmt int8
    p4ina run --clean            # remove what a crashed run left behind (its processes, interfaces, state)
    p4ina demo                   # leaf-spine, 4 workers, 1 M floats, in-network vs host ring
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from p4fabric.exceptions import FabricError

if TYPE_CHECKING:  # the runner imports Mininet: loaded only when a run starts
    from p4fabric.runner import RunOptions

DEMO_TOPO = "leafspine,2,2,2"
DEMO_SIZE = 1 << 20


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser("run", help="run an all-reduce job on an emulated fabric and report",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--topo", metavar="SPEC",
                     help="single,H | leafspine,LEAVES,SPINES,HOSTS_PER_LEAF | fattree,K | "
                          "dragonfly,GROUPS,ROUTERS,HOSTS | torus,X,Y[,Z] | ring,N,HOSTS")
    run.add_argument("--size", type=int, default=1 << 20, metavar="ELEMENTS", help="floats per all-reduce")
    run.add_argument("--count", type=int, default=3, metavar="N", help="all-reduce steps (default 3)")
    run.add_argument("--out", type=Path, metavar="DIR", help="report, plots, logs and the topology file go here")
    run.add_argument("--json", action="store_true", help="print the report as JSON on stdout (with `exact`)")
    _common(run)
    run.add_argument("--mode", action="append", choices=("innet", "ring", "gloo"),
                     help="in-network (innet, default), the host ring and/or torch.distributed's gloo; repeatable. "
                          "They run in the order ring, gloo, in-network (one run per --fmt)")
    run.add_argument("--loss", metavar="PCT", help="packet loss on every link, e.g. 2 or 2%%")
    run.add_argument("--dup", metavar="PCT", help="packet duplication on every link")
    run.add_argument("--link-down", action="append", default=[], metavar="A-B@T",
                     help="take link A-B down T seconds after the (last) in-network run's workers start")
    run.add_argument("--link-up", action="append", default=[], metavar="A-B@T", help="bring link A-B back at T")
    run.add_argument("--kill-switch", action="append", default=[], metavar="S@T", help="SIGKILL switch S at T")
    run.add_argument("--bitflip", action="append", default=[], metavar="S@T",
                     help="flip a bit of one aggregation register cell of switch S at T")
    run.add_argument("--kill-worker", action="append", default=[], metavar="H@T",
                     help="SIGKILL the worker on host H at T; its rank moves to a spare (--spare)")
    run.add_argument("--spare", action="append", default=[], metavar="H[,H]",
                     help="hot-standby hosts for --kill-worker (never run a worker; default: the first host "
                          "not used as a worker)")
    run.add_argument("--cluster", metavar="SERVER[,SERVER]",
                     help="spread switches and hosts over these servers with Mininet's cluster mode (ssh as root; "
                          "'localhost' is this machine without ssh); see docs/run.md")
    run.add_argument("--ssh-config", type=Path, metavar="FILE",
                     help="ssh client config (ssh -F) for --cluster's ssh connections")
    run.add_argument("--cli", action="store_true", help="drop into Mininet's CLI with the fabric up, after the run")
    run.add_argument("--clean", action="store_true",
                     help="remove leftovers of crashed runs (only what p4ina recorded) and exit")
    run.add_argument("--force", action="store_true", help="with --clean: also runs whose p4ina process is alive")
    run.set_defaults(handler=main_run)

    demo = subparsers.add_parser("demo", help="leaf-spine, 4 workers, 1 M floats: in-network vs the host ring",
                                 description="Build a leaf-spine fabric (2 leaves, 2 spines, 2 hosts per leaf), "
                                             "all-reduce 1 M floats in-network and with the host ring, and compare.")
    demo.add_argument("--out", type=Path, default=Path("runs/demo"), metavar="DIR")
    demo.add_argument("--size", type=int, default=DEMO_SIZE, metavar="ELEMENTS")
    demo.add_argument("--count", type=int, default=3, metavar="N")
    _common(demo)
    # The settings the fabric benchmarks use (bench.fabric_runs.sweep.BENCH_OPTIONS), which are p4ina run's: the
    # target's pool (256 slots on the embedded target) and a window of half that (docs/protocol.md, "The pool on the
    # embedded fabric").
    # The retransmission floor stays p4ina run's: losses are found by later RESULTs, the timer is the last resort
    # (docs/protocol.md, "Flow control and loss recovery").
    demo.set_defaults(handler=main_demo)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", default="embedded", choices=("embedded", "bmv2", "auto"))
    parser.add_argument("--workers", type=int, metavar="N", help="workers on the first N hosts (default: all)")
    parser.add_argument("--slots", type=int, metavar="N",
                        help="aggregation slots per switch for the job (default: 256 on the embedded target, 64 on "
                             "bmv2)")
    parser.add_argument("--window", type=int, metavar="N",
                        help="workers' largest congestion window in chunks (default: half of --slots); below "
                             "--slots a lost chunk holds up only its slot's next use")
    parser.add_argument("--values", type=int, metavar="N",
                        help="values per aggregation packet: compile the program with -D AGG_VALUES=N (32..2048; "
                             "default 2048 on the embedded target, 64 on bmv2); links get a 9000-byte MTU when an "
                             "int32 packet needs more than 1500")
    parser.add_argument("--fmt", action="append", choices=("int32", "int16", "int8"),
                        help="in-network wire and result format (default int32); repeat to measure several, each "
                             "with its own job. int32 must be exact, int16/int8 within their error bound")
    parser.add_argument("--bw", type=float, metavar="MBPS", help="link bandwidth (tc htb)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--program", type=Path, metavar="P4", help="P4 program (default: p4src/p4ina.p4)")
    parser.add_argument("--pcap", action="store_true", help="capture every switch port to DIR/logs/pcap")
    parser.add_argument("--verbose", action="store_true", help="per-packet switch logs")
    parser.add_argument("--step-timeout", type=float, default=600.0, metavar="S",
                        help="give up on a mode when a step takes longer than this")
    parser.add_argument("--retx-timeout", type=float, default=0.5, metavar="S",
                        help="workers' first retransmission timeout (doubles on each retry)")
    parser.add_argument("--retx-min", type=float, default=0.01, metavar="S",
                        help="floor of the workers' adaptive retransmission timeout (raise it on a loaded fabric)")
    parser.add_argument("--tls", action="store_true",
                        help="P4Runtime over mutual TLS: a throwaway CA and certificates in DIR/pki, the controller "
                             "connects with its certificate (topology file's tls section)")
    parser.add_argument("--uplinks", choices=("ecmp", "spray"), default="ecmp",
                        help="equal-cost uplinks for ordinary traffic (ring, gloo): ecmp hashes each flow onto one, "
                             "spray sends each packet on a random one (aggregation follows its tree either way)")
    parser.add_argument("--priority-queues", type=int, default=1, metavar="N",
                        help="egress queues per switch port (1..8); with more than one the controller maps DSCP "
                             "to priorities (gradients above bulk traffic)")


def main_run(args: argparse.Namespace) -> int:
    if args.clean:
        return clean(force=args.force, as_json=args.json)
    if not args.topo or not args.out:
        print("p4ina run: error: --topo and --out are required (or --clean)", file=sys.stderr)
        return 2
    from p4fabric.faults import build_plan

    try:
        plan = build_plan(loss=args.loss, dup=args.dup, link_down=args.link_down, link_up=args.link_up,
                          kill_switch=args.kill_switch, bitflip=args.bitflip, kill_worker=args.kill_worker)
    except FabricError as exc:
        return _fail(exc)
    return _run(args, topo=args.topo, modes=tuple(args.mode or ("innet",)), plan=plan, as_json=args.json,
                cli=args.cli)


def main_demo(args: argparse.Namespace) -> int:
    from p4fabric.faults import FaultPlan

    code = _run(args, topo=DEMO_TOPO, modes=("ring", "innet"), plan=FaultPlan(), as_json=False, cli=False)
    return code


def _run(args: argparse.Namespace, *, topo: str, modes: tuple[str, ...], plan: Any, as_json: bool,
         cli: bool) -> int:
    from p4fabric.report import print_summary
    from p4fabric.runner import Runner
    from p4ina.targets import TargetError, get_target

    try:
        get_target(args.target)  # a missing BMv2 is the first thing to say, with how to install it
    except TargetError as exc:
        return _fail(exc)
    options = run_options(args, topo=topo, modes=modes, plan=plan, cli=cli)
    try:
        options.validate()  # bad options are the user's first problem, before root
    except FabricError as exc:
        return _fail(exc)
    if os.geteuid() != 0:
        print("p4ina run: error: emulated fabrics need root (network namespaces, veth pairs); run with sudo",
              file=sys.stderr)
        return 1
    try:
        report = Runner(options).run()
    except (FabricError, TargetError) as exc:
        return _fail(exc)
    except Exception as exc:  # a failing layer below: one line here, the details in the run's logs
        if type(exc).__module__.split(".")[0] in ("controller", "hostagent", "p4switch"):
            return _fail(exc)
        raise
    if as_json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        print_summary(report)
    return 0 if report.correct else 1


def run_options(args: argparse.Namespace, *, topo: str, modes: tuple[str, ...], plan: Any, cli: bool) -> RunOptions:
    """The `RunOptions` of parsed `p4ina run`/`p4ina demo` arguments (not yet checked: `RunOptions.validate`)."""
    from p4fabric.runner import DEFAULT_PROGRAM, RunOptions

    return RunOptions(topo=topo, out=args.out, size=args.size, count=args.count, target=args.target,
                      modes=modes, workers=args.workers, slots=args.slots, window=args.window,
                      fmts=tuple(args.fmt or ("int32",)),
                      seed=args.seed, bw=args.bw, faults=plan, program=args.program or DEFAULT_PROGRAM,
                      pcap=args.pcap, verbose=args.verbose, cli=cli, step_timeout=args.step_timeout,
                      retx_timeout=args.retx_timeout, retx_min=args.retx_min, show_progress=True, tls=args.tls,
                      priority_queues=args.priority_queues, uplinks=args.uplinks, values=args.values,
                      spares=tuple(h for item in getattr(args, "spare", []) for h in item.split(",") if h),
                      cluster=getattr(args, "cluster", None), ssh_config=getattr(args, "ssh_config", None))


def clean(*, force: bool, as_json: bool) -> int:
    from p4fabric.cleanup import clean_leftovers, state_root

    reports = clean_leftovers(force=force)
    if as_json:
        print(json.dumps([vars(r) for r in reports], indent=2))
    elif not reports:
        print(f"p4ina run --clean: nothing to clean ({state_root()} holds no runs)")
    for report in reports if not as_json else []:
        print(report.summary())
    return 0


def _fail(exc: BaseException) -> int:
    first = str(exc).strip().splitlines()
    print(f"p4ina run: error: {first[0] if first else type(exc).__name__}", file=sys.stderr)
    for line in first[1:]:
        print(f"  {line}", file=sys.stderr)
    return 1
