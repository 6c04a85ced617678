"""`p4ina ctl ...`: the controller's command line. Every command takes `--json` for machine-readable output.

State (topology file, pipeline files, jobs, failed switches and links) persists between invocations in
`~/.p4ina/controller.json` (or `--state`, or $P4INA_CTL_STATE); events go to `events.jsonl` beside it.
Errors are one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller import nccl_facts
from controller.app import ControllerApp, Session
from controller.exceptions import ControllerError
from controller.failures import Watcher, link_change
from controller.ranks import nccl_system_xml, nccl_topology_xml, uplink_crossings
from controller.state import UPLINK_MODES, JobRecord
from controller.telemetry import collect, job_totals, metrics_server, to_prometheus
from controller.trees import compute_tree, link_load

Handler = Callable[[argparse.Namespace, ControllerApp], Any]


def register(subparsers: argparse._SubParsersAction) -> None:
    ctl = subparsers.add_parser("ctl", help="controller: pipelines, jobs, reduction trees, telemetry, failures",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    common.add_argument("--state", metavar="FILE", default=argparse.SUPPRESS, help="controller state file")
    common.add_argument("--topology", metavar="FILE", default=argparse.SUPPRESS,
                        help="topology file (YAML; remembered in the state)")
    common.add_argument("--timeout", type=float, default=argparse.SUPPRESS, metavar="S",
                        help="per-RPC timeout in seconds (default 5)")
    sub = ctl.add_subparsers(dest="ctl_command", metavar="COMMAND")

    def cmd(parent: Any, name: str, fn: Handler, help_text: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = parent.add_parser(name, help=help_text, parents=[common])
        p.set_defaults(handler=_run(fn))
        return p

    def group(name: str, help_text: str) -> Any:
        p = sub.add_parser(name, help=help_text)
        p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])
        return p.add_subparsers(dest="what", metavar="ACTION")

    topo = group("topology", "show the fabric")
    cmd(topo, "show", _topology_show, "switches, hosts and links of the topology")

    pipe = group("pipeline", "push the P4 pipeline")
    p = cmd(pipe, "push", _pipeline_push, "push P4Info and device config to switches, then forwarding and jobs")
    p.add_argument("--p4info", required=True, metavar="FILE", help="P4Info (text format)")
    p.add_argument("--config", required=True, metavar="FILE", help="device config (embedded JSON or BMv2 JSON)")
    p.add_argument("--switch", action="append", metavar="NAME", help="only these switches (repeatable)")
    p.add_argument("--no-forwarding", action="store_true", help="do not install forwarding entries")
    p.add_argument("--uplinks", choices=UPLINK_MODES, help="equal-cost uplinks: ecmp hashes each flow to one, spray "
                                                           "sends each packet on a random one (kept for reroutes)")

    job = group("job", "create, delete, list, show jobs")
    p = cmd(job, "create", _job_create, "compute a reduction tree and install the job on its switches")
    p.add_argument("members", nargs="+", metavar="HOST", help="member hosts (comma or space separated)")
    p.add_argument("--name", default="")
    p.add_argument("--root", metavar="SWITCH", help="force the tree's root")
    p.add_argument("--quant", default="int32", choices=("int32", "int16", "int8"), help="result format")
    p.add_argument("--slots", type=int, default=64, help="aggregation slots per switch (the workers' pool size)")
    p.add_argument("--scale", type=int, default=0, help="the job's scale exponent E (-128..127)")
    p.add_argument("--id", type=int, dest="job_id", help="job id (default: next free)")
    p.add_argument("--worker-port", action="append", default=[], metavar="HOST=PORT",
                   help="a worker's UDP receive port (default 48864)")
    p.add_argument("--values", type=int, metavar="N",
                   help="values per packet the workers pack; refused unless the pipeline was built for N "
                        "(default: the pipeline's N, read from its P4Info)")
    p.add_argument("--spare", action="append", default=[], metavar="H1,H2",
                   help="hot-standby hosts: `job replace` moves a dead worker's rank to one of them")
    p = cmd(job, "replace", _job_replace, "move a dead worker's rank to a spare host (tree and entries follow)")
    p.add_argument("job_id", type=int, metavar="JOB")
    p.add_argument("dead", metavar="DEAD", help="the member host that died")
    p.add_argument("spare", nargs="?", metavar="SPARE",
                   help="the spare to use (default: the job's first spare on DEAD's switch, else its first)")
    p = cmd(job, "delete", _job_delete, "remove everything the job installed")
    p.add_argument("job_id", type=int, metavar="JOB")
    cmd(job, "list", _job_list, "jobs with their root, members and status")
    p = cmd(job, "show", _job_show, "one job: tree, ranks, resources per switch")
    p.add_argument("job_id", type=int, metavar="JOB")
    p.add_argument("--read-back", action="store_true", help="compare what the switches hold with the intent")

    tree = group("tree", "reduction trees")
    p = cmd(tree, "show", _tree_show, "draw a job's tree (or preview one for --members)")
    p.add_argument("job_id", type=int, nargs="?", metavar="JOB")
    p.add_argument("--members", metavar="H1,H2,...", help="preview the tree for these hosts (installs nothing)")

    p = cmd(sub, "counters", _counters, "per-job and per-switch counters")
    p.add_argument("--job", type=int, help="only this job")
    p.add_argument("--prometheus", action="store_true", help="Prometheus text format")

    p = cmd(sub, "metrics", _metrics, "serve Prometheus metrics over HTTP (GET /metrics collects afresh)")
    p.add_argument("--listen", default="127.0.0.1:9464", metavar="HOST:PORT")
    p.add_argument("--duration", type=float, default=None, metavar="S", help="stop after S seconds")

    p = cmd(sub, "events", _events, "controller events (switch loss, rebuilds, digests)")
    p.add_argument("--follow", "-f", action="store_true", help="keep printing new events")
    p.add_argument("--last", type=int, default=50, help="how many past events to print first")

    p = cmd(sub, "watch", _watch, "stay connected: detect failures, rebuild trees, restore returning switches")
    p.add_argument("--probe-interval", type=float, default=1.0, metavar="S")
    p.add_argument("--duration", type=float, default=None, metavar="S", help="stop after S seconds")

    link = group("link", "declare a link down or up")
    for state in ("down", "up"):
        p = cmd(link, state, _link, f"mark a link {state} and rebuild affected jobs")
        p.add_argument("a", metavar="SWITCH")
        p.add_argument("b", metavar="SWITCH")

    p = cmd(sub, "shell", _shell, "open p4runtime-shell on one switch")
    p.add_argument("switch", metavar="SWITCH")

    p = cmd(sub, "nccl-topo", _nccl_topo, "rank order and NCCL topology XML for a job")
    p.add_argument("job_id", type=int, metavar="JOB")
    p.add_argument("--host", help="write only this host's NCCL_TOPO_FILE (<system>)")
    p.add_argument("--from-sys", metavar="DEV", help="with --host, run on that host: take NUMA node, PCI bus id, "
                                                      "speed and CPU from this machine's /sys for interface DEV")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")

    ctl.set_defaults(handler=lambda args: (ctl.print_help(), 2)[1])


def _run(fn: Handler) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        app = ControllerApp(getattr(args, "state", None), timeout=getattr(args, "timeout", 5.0))
        try:
            result = fn(args, app)
        except ControllerError as exc:
            print(f"p4ina ctl: error: {exc}", file=sys.stderr)
            return 1
        except OSError as exc:
            print(f"p4ina ctl: error: {exc}", file=sys.stderr)
            return 1
        except Exception as exc:  # a bug: one line for users, the traceback with P4INA_DEBUG=1
            if os.environ.get("P4INA_DEBUG"):
                raise
            first = str(exc).splitlines()[0] if str(exc) else ""
            print(f"p4ina ctl: internal error: {type(exc).__name__}: {first} (P4INA_DEBUG=1 for details)",
                  file=sys.stderr)
            return 1
        if isinstance(result, int):
            return result
        if result is not None:
            if args.json:
                print(json.dumps(result, indent=1, sort_keys=True, default=str))
            else:
                print(_text(result))
        return 0

    return handler


def _text(result: Any) -> str:
    if isinstance(result, dict) and "text" in result:
        return str(result["text"])
    return json.dumps(result, indent=1, sort_keys=True, default=str)


def _session(args: argparse.Namespace, app: ControllerApp) -> Any:
    return app.session(getattr(args, "topology", None))


# -- commands ------------------------------------------------------------------------------------------------------
def _topology_show(args: argparse.Namespace, app: ControllerApp) -> Any:
    with _session(args, app) as s:
        topo = s.topo
        data = topo.to_dict()
        lines = [f"{topo.name} ({topo.kind}): {len(topo.switches)} switches, {len(topo.hosts)} hosts, "
                 f"{len(topo.links)} links"]
        for sw in topo.switches.values():
            state = " DOWN" if sw.name in s.state.down_switches else ""
            ports = ", ".join(f"{p}:{n}" for p, n in topo.ports(sw.name).items())
            lines.append(f"  {sw.name:<10} {sw.role or '-':<7} {sw.grpc or '-':<21} dev {sw.device_id}{state}  "
                         f"[{ports}]")
        data["down_switches"] = list(s.state.down_switches)
        data["down_links"] = list(s.state.down_links)
        data["text"] = "\n".join(lines)
        return data


def _pipeline_push(args: argparse.Namespace, app: ControllerApp) -> Any:
    with _session(args, app) as s:
        if args.uplinks is not None:
            s.set_uplinks(args.uplinks)
        out = s.push_pipeline(args.p4info, args.config, args.switch, forwarding=not args.no_forwarding)
        pushed = sorted(out.results)
        errors = {sw: str(e) for sw, e in out.errors.items()}
        text = f"pipeline pushed to {len(pushed)} switch(es): {', '.join(pushed) or 'none'}"
        for sw, e in errors.items():
            text += f"\n  {sw}: FAILED: {e}"
        result = {"pushed": pushed, "errors": errors, "text": text}
    if errors and not args.json:
        print(text)
        return 1
    return result


def _members(raw: list[str]) -> list[str]:
    return [m for item in raw for m in item.split(",") if m]


def _job_summary(rec: JobRecord) -> dict[str, Any]:
    return {"job": rec.job_id, "name": rec.name, "members": rec.members, "root": rec.tree.root,
            "depth": rec.tree.depth, "switches": rec.tree.switches, "slots": rec.slots, "quant": rec.quant,
            "scale": rec.scale, "status": rec.status, "rebuilt": rec.rebuilt, "uncleared": rec.uncleared,
            "values": rec.values, "spares": rec.spares}


def _job_create(args: argparse.Namespace, app: ControllerApp) -> Any:
    ports: dict[str, int] = {}
    for item in args.worker_port:
        host, _, port = item.partition("=")
        if not port.isdigit():
            raise ControllerError(f"--worker-port expects HOST=PORT, got {item!r}")
        ports[host] = int(port)
    with _session(args, app) as s:
        rec = s.jobs.create(_members(args.members), name=args.name, root=args.root, quant=args.quant,
                            slots=args.slots, job_id=args.job_id, scale=args.scale, worker_ports=ports,
                            values=args.values, spares=_members(args.spare))
        s.events.emit(_event("job_created", rec))
        data = _job_summary(rec)
        data["workers"] = rec.workers
        data["text"] = (f"job {rec.job_id} created: root {rec.tree.root}, depth {rec.tree.depth}, "
                        f"{len(rec.tree.parent)} switches, {rec.values} values per packet\n" + rec.tree.drawing() + "\n" + _workers_table(rec))
        if rec.uncleared:
            data["text"] += (f"\nwarning: slots not cleared on {', '.join(rec.uncleared)} (no P4Runtime register "
                             "writes): a deleted job's slot state left there can stall this job or answer it with "
                             "that job's sums; restart those switches before reusing their slots")
        return data


def _event(kind: str, rec: JobRecord) -> Any:
    from controller.events import Event

    return Event(kind, job=rec.job_id, data={"root": rec.tree.root, "members": len(rec.members)})


def _workers_table(rec: JobRecord) -> str:
    lines = ["rank  host        switch      port  child"]
    for w in rec.workers:
        lines.append(f"{w['rank']:<5} {w['host']:<11} {w['switch']:<11} {w['port']:<5} {w['child_index']}")
    return "\n".join(lines)


def _job_replace(args: argparse.Namespace, app: ControllerApp) -> Any:
    from controller.events import Event

    started = time.time()
    with _session(args, app) as s:
        rec = s.jobs.replace_member(args.job_id, args.dead, args.spare)
        moved = rec.replaced[-1]
        ms = round((time.time() - started) * 1000, 1)
        s.events.emit(Event("worker_replaced", job=rec.job_id, detail=f"{moved['dead']} -> {moved['spare']}",
                            data={"rank": moved["rank"], "same_switch": moved["same_switch"], "replace_ms": ms}))
        data = _job_summary(rec)
        data.update(dead=moved["dead"], spare=moved["spare"], rank=moved["rank"], same_switch=moved["same_switch"],
                    replace_ms=ms, workers=rec.workers, ranks=rec.ranks)
        data["cells"] = _spare_cells(s, rec, moved["spare"]) if moved["same_switch"] else None
        data["text"] = (f"job {rec.job_id}: rank {moved['rank']} moved from {moved['dead']} to {moved['spare']} "
                        f"({'same switch, child index kept' if moved['same_switch'] else 'tree changed'}) "
                        f"in {ms} ms\n" + _workers_table(rec))
        return data


def _spare_cells(s: Any, rec: JobRecord, spare: str) -> list[list[list[int]]] | None:
    """The job's cells on the spare's switch as seen by its (the dead worker's) child index, read after the entries
    moved (the dead worker's packets are no longer admitted), for the spare's resume points (controller/standby.py).
    None where registers cannot be read over P4Runtime (BMv2)."""
    from controller.standby import read_cells

    w = next(w for w in rec.workers if w["host"] == spare)
    g = rec.grants[w["switch"]]
    out = s.fabric.run(lambda c: read_cells(c, s.helper, g.slot_base, g.slot_count, w["child_index"]), [w["switch"]])
    if out.errors:
        return None
    return [[c.as_list() for c in pair] for pair in out.results[w["switch"]]]


def _job_delete(args: argparse.Namespace, app: ControllerApp) -> Any:
    with _session(args, app) as s:
        rec, missed = s.jobs.delete(args.job_id)
        s.events.emit(_event("job_deleted", rec))
        text = f"job {rec.job_id} deleted from {len(rec.installed) - len(missed)} switch(es)"
        if missed:
            text += f"; unreachable (state wiped when they return): {', '.join(sorted(missed))}"
        return {"job": rec.job_id, "unreachable": sorted(missed), "text": text}


def _job_list(args: argparse.Namespace, app: ControllerApp) -> Any:
    with _session(args, app) as s:
        rows = [_job_summary(r) for _, r in sorted(s.state.jobs.items())]
    lines = ["job  name        status    root        depth  slots  quant  members"]
    for r in rows:
        lines.append(f"{r['job']:<4} {r['name']:<11} {r['status']:<9} {r['root']:<11} {r['depth']:<6} "
                     f"{r['slots']:<6} {r['quant']:<6} {','.join(r['members'])}")
    return {"jobs": rows, "text": "\n".join(lines) if rows else "no jobs"}


def _job_show(args: argparse.Namespace, app: ControllerApp) -> Any:
    with _session(args, app) as s:
        rec = s.jobs.get(args.job_id)
        data = _job_summary(rec)
        data["ranks"] = rec.ranks
        data["workers"] = rec.workers
        data["grants"] = {sw: vars(g) for sw, g in rec.grants.items()}
        data["entities"] = {sw: len(v) for sw, v in rec.installed.items()}
        data["replaced"] = rec.replaced
        lines = [f"job {rec.job_id} ({rec.name}): {rec.status}, {rec.quant}, scale {rec.scale}, "
                 f"{rec.slots} slots, {rec.values} values per packet, rebuilt {rec.rebuilt}x", rec.tree.drawing(), _workers_table(rec),
                 "switch      idx  slots        group  entities"]
        for sw, g in sorted(rec.grants.items()):
            lines.append(f"{sw:<11} {g.job_idx:<4} {g.slot_base:>4}..{g.slot_base + g.slot_count - 1:<6} "
                         f"{g.group:<6} {len(rec.installed.get(sw, []))}")
        if rec.spares or rec.replaced:
            lines.append("spares: " + (", ".join(rec.spares) or "none left") + "".join(
                f"; {r['dead']} replaced by {r['spare']} (rank {r['rank']})" for r in rec.replaced))
        if args.read_back:
            back = s.jobs.read_back(rec.job_id)
            match = {sw: len(back.get(sw, [])) == len(v) for sw, v in rec.installed.items()}
            data["read_back"] = match
            lines.append("read back: " + ", ".join(f"{sw} {'ok' if ok else 'MISSING'}" for sw, ok in match.items()))
        data["text"] = "\n".join(lines)
        return data


def _tree_show(args: argparse.Namespace, app: ControllerApp) -> Any:
    with _session(args, app) as s:
        if args.members:
            others = [r.tree for r in s.state.jobs.values()]
            tree = compute_tree(s.topo, _members([args.members]), link_load=link_load(others),
                                down_switches=s.state.down_switches,
                                down_links=[(a, b) for a, b in s.state.down_links])
            title = "preview (nothing installed)"
        elif args.job_id is not None:
            tree = s.jobs.get(args.job_id).tree
            title = f"job {args.job_id}"
        else:
            raise ControllerError("give a JOB or --members H1,H2,...")
        data = tree.to_dict()
        data["depth"] = tree.depth
        data["text"] = f"{title}: depth {tree.depth}\n{tree.drawing()}"
        return data


def _counters(args: argparse.Namespace, app: ControllerApp) -> Any:
    with _session(args, app) as s:
        jobs = {j: r for j, r in s.state.jobs.items() if args.job is None or j == args.job}
        if args.job is not None and not jobs:
            s.jobs.get(args.job)
        switches = None
        if args.job is not None:
            switches = sorted(jobs[args.job].tree.parent)
        samples = collect(s.fabric, jobs, switches, unknown_job_row=s.program.unknown_job_row(s.helper))
    if args.prometheus:
        sys.stdout.write(to_prometheus(samples))
        return 0
    totals = job_totals(samples)
    lines = ["job  packets     drops (by reason)"]
    for job, row in sorted(totals.items(), key=lambda kv: int(kv[0])):
        drops = ", ".join(f"{k[6:]}={v}" for k, v in sorted(row.items()) if k.startswith("drops_") and v)
        lines.append(f"{job:<4} {row.get('packets', 0):<11} {drops or '-'}")
    down = [dict(x.labels)["switch"] for x in samples if x.metric == "p4ina_switch_up" and not x.value]
    if down:
        lines.append("unreachable: " + ", ".join(down))
    return {"samples": [x.to_dict() for x in samples], "jobs": totals, "text": "\n".join(lines)}


def _metrics(args: argparse.Namespace, app: ControllerApp) -> Any:
    host, _, port = args.listen.rpartition(":")
    if not port.isdigit():
        raise ControllerError(f"--listen expects HOST:PORT, got {args.listen!r}")
    topology = getattr(args, "topology", None)

    def scrape() -> str:
        with app.session(topology) as s:
            samples = collect(s.fabric, s.state.jobs, unknown_job_row=s.program.unknown_job_row(s.helper))
        return to_prometheus(samples)

    server = metrics_server(host or "127.0.0.1", int(port), scrape)
    where = f"http://{host or '127.0.0.1'}:{server.server_port}/metrics"
    print(json.dumps({"serving": where}) if args.json else f"serving {where} (Ctrl-C to stop)", flush=True)
    if args.duration:
        threading.Timer(args.duration, server.shutdown).start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _events(args: argparse.Namespace, app: ControllerApp) -> Any:
    log = app.events
    past = log.read()[-args.last:] if args.last > 0 else []
    for ev in past:
        print(json.dumps(ev.to_dict(), sort_keys=True) if args.json else ev.line(), flush=True)
    if args.follow:
        try:
            for ev in log.follow():
                print(json.dumps(ev.to_dict(), sort_keys=True) if args.json else ev.line(), flush=True)
        except KeyboardInterrupt:
            return 0
    return 0


def _watch(args: argparse.Namespace, app: ControllerApp) -> Any:
    with _session(args, app) as s:
        topo = s.topo
    watcher = Watcher(app, topo, probe_interval=args.probe_interval)
    end = time.monotonic() + args.duration if args.duration else None
    signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop: leave through the same clean path
    watcher.start()
    if args.json:
        print(json.dumps({"watching": len(topo.switches), "events": str(app.events.path)}), flush=True)
    else:
        print(f"watching {len(topo.switches)} switches (Ctrl-C to stop); events: {app.events.path}", flush=True)
    try:
        while end is None or time.monotonic() < end:
            watcher.step(args.probe_interval)
    except KeyboardInterrupt:
        pass
    finally:
        watcher.fabric.close()
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _link(args: argparse.Namespace, app: ControllerApp) -> Any:
    up = args.what == "up"
    with _session(args, app) as s:
        events = link_change(s, args.a, args.b, up=up)
        for ev in events:
            s.events.emit(ev)
        return {"events": [e.to_dict() for e in events],
                "text": "\n".join(e.line() for e in events) or "no change"}


def _shell(args: argparse.Namespace, app: ControllerApp) -> Any:
    with _session(args, app) as s:
        if args.switch not in s.topo.switches:
            raise ControllerError(f"unknown switch {args.switch!r}")
        sw = s.topo.switches[args.switch]
        tls = s.topo.tls
    if shutil.which(sys.executable) is None:
        raise ControllerError("no Python interpreter to run p4runtime-shell")
    # no --config: p4runtime-shell would push the pipeline and wipe the switch; it reads P4Info from the switch
    cmd = [sys.executable, "-m", "p4runtime_sh", "--grpc-addr", sw.grpc, "--device-id", str(sw.device_id),
           "--election-id", f"0,{time.time_ns() // 1000}"]
    if tls is not None:
        cmd += ["--ssl", "--cacert", tls.ca]
        if tls.cert:
            cmd += ["--cert", tls.cert, "--private-key", tls.key]
    if args.json:
        return {"command": cmd}
    os.execv(cmd[0], cmd)
    return 0  # not reached


def _nccl_topo(args: argparse.Namespace, app: ControllerApp) -> Any:
    with _session(args, app) as s:
        rec = s.jobs.get(args.job_id)
        if args.from_sys and not args.host:
            raise ControllerError("--from-sys reads this machine's NIC facts: it needs --host (the host you are on)")
        facts = nccl_facts.from_sysfs(args.from_sys) if args.from_sys else None
        xml = nccl_system_xml(s.topo, args.host, facts) if args.host else \
            nccl_topology_xml(s.topo, rec.tree, rec.job_id, rec.ranks)
        crossings = uplink_crossings(s.topo, rec.ranks)
    if args.output:
        _write_atomic(Path(args.output), xml)
    if args.json:
        return {"job": args.job_id, "ranks": rec.ranks, "ring_crossings": crossings, "xml": xml,
                "output": args.output}
    if not args.output:
        sys.stdout.write(xml)
    else:
        print(f"wrote {args.output}: ranks {' '.join(rec.ranks)} ({crossings} switch crossings on the ring)")
    return 0


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=".nccl-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


__all__ = ["Session", "register"]
