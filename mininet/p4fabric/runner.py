"""`p4ina run`: build the fabric, start the controller, create the job, run the workers in the hosts, inject
faults, and report. Everything it creates is recorded in a `RunState` and removed at the end, on signals, at
exit, or by `p4ina run --clean` after a crash.

A run measures its modes one after the other on the same fabric: the host ring, gloo, then in-network once per
format (`RunOptions.fmts`), each format with its own job (`--quant FMT`, on the first job's root, so on the same
tree; each holds its own slots). Timed faults hit the last in-network run."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p4fabric.cleanup import ExitHooks, RunState
from p4fabric.cluster import ClusterSpec, write_placement
from p4fabric.control import FabricController, JobInfo
from p4fabric.exceptions import FabricError, RunError
from p4fabric.fabric import Fabric
from p4fabric.faults import FaultEvent, FaultInjector, FaultPlan, validate_plan
from p4fabric.replace import WorkerReplacer, default_spares, fixed_exponent
from p4fabric.report import RunReport, WorkerResult, plot, summarise, write_json
from p4fabric.topos import FabricTopo, parse_topo_spec
from p4ina.targets import CompiledProgram, Target, TargetError, get_target

REPO = Path(__file__).resolve().parents[2]
DEFAULT_PROGRAM = REPO / "p4src" / "p4ina.p4"
MODE_NAMES = {"ring": "ring", "gloo": "gloo", "innet": "in-network"}
BASELINES = ("ring", "gloo")  # host-based modes, run before the in-network ones in this order
FORMATS = ("int32", "int16", "int8")
SWITCH_SUBNET = "10.255.0.0/16"  # the controller's switch addresses (controller.topology.switch_address)
#: Values per aggregation packet (`-D AGG_VALUES=N`) when the run does not say: real BMv2 keeps the program's 64;
#: the embedded target's fabric runs use the N that ran the measured command fastest (docs/run.md, "Values per
#: packet": 256 beat 64 and 1024 end to end; 1024 has the fastest steps but minutes more of build and load).
DEFAULT_VALUES = {"bmv2": 64}
EMBEDDED_DEFAULT_VALUES = 2048
#: A job's slot pool on every switch when the run does not say (`--slots`); the workers' window is half of it. Real
#: BMv2 keeps SwitchML's 64. The embedded fabric's round trips are tens of milliseconds (software switches on shared
#: cores), and there a window of 128 chunks made the demo's in-network step about a fifth shorter than 32 or 64
#: (docs/protocol.md, "The pool on the embedded fabric").
DEFAULT_SLOTS = {"bmv2": 64}
EMBEDDED_DEFAULT_SLOTS = 256
#: Slots the embedded target's program is built with (`-D AGG_SLOTS`; the program's own default is 512): room for
#: every format's job (int32, int16, int8) of the default pool on one switch.
EMBEDDED_AGG_SLOTS = 1024
ETHERNET_MTU = 1500
JUMBO_MTU = 9000
BITFLIP_BIT = 20
AGG_REGISTERS = "P4inaIngress.aggregation"  # docs/p4-program.md, Registers
FAILED_RANK_GRACE = 10.0  # seconds the other ranks get to finish after one rank failed
SPARE_RUN_RETRIES = 2000  # a rank waiting for a dead one's replacement retransmits until the spare joins


@dataclass
class RunOptions:
    topo: str
    out: Path
    size: int = 1 << 20
    count: int = 3
    target: str = "embedded"
    modes: tuple[str, ...] = ("innet",)
    workers: int | None = None
    #: The job's slot pool on every switch (None: the target's, `run_slots`).
    slots: int | None = None
    #: The workers' largest congestion window in chunks (None: half the job's slot pool). Below the pool, a lost
    #: chunk blocks only its slot's next use instead of every later send: 1% loss on every link cost 4 MB all-reduces
    #: 0.49-0.53 s against 0.56-0.70 s with the window at the pool (docs/protocol.md, "Flow control").
    window: int | None = None
    #: In-network formats, each run as its own mode with its own job, in this order. Default: int32 only.
    fmts: tuple[str, ...] = ()
    #: Shorthand for `fmts=(fmt,)` (the single-format option of earlier versions); give one or the other.
    fmt: str | None = None
    seed: int = 1
    bw: float | None = None
    faults: FaultPlan = field(default_factory=FaultPlan)
    program: Path = DEFAULT_PROGRAM
    pcap: bool = False
    verbose: bool = False
    cli: bool = False
    step_timeout: float = 600.0
    retx_timeout: float = 0.5
    #: Floor of the workers' adaptive retransmission timeout. On a loaded software fabric a chunk's round trip waits
    #: for the slowest worker's contribution, so a floor well above the typical round trip avoids spurious resends.
    retx_min: float = 0.01
    show_progress: bool = True
    #: Serve P4Runtime over mutual TLS with a throwaway PKI in `out/pki`; the controller connects with its certificate.
    tls: bool = False
    #: Egress queues per switch port (`--priority-queues`); with more than one the controller maps DSCP to classes.
    priority_queues: int = 1
    #: `program` already compiled for this target (a benchmark's many runs of one program compile it once).
    compiled: CompiledProgram | None = None
    #: Draw steps.png and links.png (a benchmark that plots its own summary skips them: about 1 s per run).
    plots: bool = True
    #: Equal-cost uplinks: "ecmp" hashes each flow onto one, "spray" sends each packet on a random one.
    uplinks: str = "ecmp"
    #: Values per aggregation packet the program is compiled for (`-D AGG_VALUES=N`; None: the target's default,
    #: `DEFAULT_VALUES`). Every link's MTU follows (jumbo frames when an int32 packet exceeds 1500 bytes of IP).
    values: int | None = None
    #: Hot-standby hosts for `--kill-worker` (default: the first host not used as a worker); never run a worker.
    spares: tuple[str, ...] = ()
    #: Servers for Mininet's cluster mode (`--cluster a,b`; p4fabric.cluster) and the ssh client config to reach
    #: them (`--ssh-config`); None: the fabric stays on this machine.
    cluster: str | None = None
    ssh_config: Path | None = None

    def __post_init__(self) -> None:
        if not self.fmts:
            self.fmts = (self.fmt or "int32",)

    def pool(self, target: str) -> int:
        """The job's slot pool on `target`: `slots`, or the target's default."""
        return self.slots if self.slots is not None else run_slots(target)

    def worker_window(self, target: str) -> int:
        """The window the workers run with on `target`: `window`, or half the pool."""
        return self.window if self.window is not None else max(1, self.pool(target) // 2)

    def validate(self) -> None:
        if self.fmt is not None and self.fmts != (self.fmt,):
            raise RunError(f"fmt={self.fmt!r} and fmts={self.fmts!r}: fmt is a one-format shorthand, give one of them")
        unknown_fmts = [f for f in self.fmts if f not in FORMATS]
        if unknown_fmts:
            raise RunError(f"unknown format(s) {', '.join(unknown_fmts)}; choose from {', '.join(FORMATS)}")
        twice = sorted({f for f in self.fmts if self.fmts.count(f) > 1})
        if twice:
            raise RunError(f"--fmt {', '.join(twice)} given more than once")
        if "gloo" in self.modes and importlib.util.find_spec("torch") is None:
            raise RunError("--mode gloo needs torch (pip install 'p4ina[torch]')")
        if self.size < 1:
            raise RunError(f"--size must be at least 1 element, got {self.size}")
        if self.count < 1:
            raise RunError(f"--count must be at least 1, got {self.count}")
        if self.workers is not None and self.workers < 1:
            raise RunError(f"--workers must be at least 1, got {self.workers}")
        unknown = [m for m in self.modes if m not in MODE_NAMES]
        if unknown or not self.modes:
            raise RunError(f"unknown mode(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(MODE_NAMES)}")
        if self.slots is not None and self.slots < 1:
            raise RunError(f"--slots must be at least 1, got {self.slots}")
        if self.window is not None and self.slots is not None and not 1 <= self.window <= self.slots:
            raise RunError(f"--window must be in 1..--slots ({self.slots}), got {self.window}")
        if not 1 <= self.priority_queues <= 8:
            raise RunError(f"--priority-queues must be in 1..8, got {self.priority_queues}")
        if not self.program.exists():
            raise RunError(f"P4 program {self.program} does not exist")
        from hostagent.protocol import SUPPORTED_VALUES

        if self.values is not None and self.values not in SUPPORTED_VALUES:
            raise RunError(f"--values {self.values}: the program builds for {', '.join(map(str, SUPPORTED_VALUES))}")


@dataclass(frozen=True)
class ModeRun:
    """One measured mode of a run: `mode` as hostproc takes it, and the in-network format ("" for ring/gloo)."""

    mode: str
    fmt: str = ""

    @property
    def name(self) -> str:
        """The report's name: "ring", "gloo", "in-network" (int32, as before formats were added), "in-network int8"."""
        base = MODE_NAMES[self.mode]
        return base if self.fmt in ("", "int32") else f"{base} {self.fmt}"

    @property
    def tag(self) -> str:
        """File-name form of `name` (worker outputs and logs)."""
        return self.mode if self.fmt in ("", "int32") else f"{self.mode}-{self.fmt}"


def plan_modes(modes: tuple[str, ...], fmts: tuple[str, ...]) -> list[ModeRun]:
    """The order a run measures its modes in: ring, gloo, then in-network per format as given (faults come last)."""
    plan = [ModeRun(m) for m in BASELINES if m in modes]
    if "innet" in modes:
        plan += [ModeRun("innet", f) for f in fmts]
    return plan


class Runner:
    def __init__(self, options: RunOptions, *, log: Callable[[str], None] | None = None) -> None:
        options.validate()
        self.opts = options
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self.fabric: Fabric | None = None
        self.ctl: FabricController | None = None
        self.job: JobInfo | None = None
        self.job_fmt = ""  # the current job's result format (`--quant`)
        self.values = 64  # values per packet of the compiled pipeline (set by `run` from its P4Info)
        self.target: Target | None = None
        self.pool = self.window = 0  # the job's slots per switch, the workers' window (`run` sets them for its target)
        self.hooks = ExitHooks()
        self.spares: list[str] = []  # hot-standby hosts of a --kill-worker run
        self.replacer: WorkerReplacer | None = None  # the current mode's, when it has a kill-worker fault

    # -- the whole run --

    def run(self) -> RunReport:
        opts = self.opts
        self.target = get_target(opts.target)
        self.pool, self.window = opts.pool(self.target.name), opts.worker_window(self.target.name)
        if opts.window is not None and not 1 <= opts.window <= self.pool:
            raise RunError(f"--window must be in 1..the pool ({self.pool} slots on {self.target.name}), "
                           f"got {opts.window}")
        topo = parse_topo_spec(opts.topo, lopts=self._link_options())
        validate_plan(opts.faults, topo.switches(), [(a, b) for a, b in topo.links()], hosts=topo.hosts())
        workers = self._worker_hosts(topo)
        if opts.spares or any(e.kind == "kill-worker" for e in opts.faults.events):
            self.spares = default_spares(self._all_hosts(topo), workers, opts.spares)
        opts.out.mkdir(parents=True, exist_ok=True)
        report = RunReport(topology=topo.title, target=self.target.name, size=opts.size, count=opts.count,
                           workers=workers, out_dir=str(opts.out), faults={"plan": opts.faults.as_dict()})
        program = self._compile()
        self.values = pipeline_values(program.p4info)
        if opts.values is not None and opts.values != self.values:
            raise RunError(f"--values {opts.values}: the compiled program carries {self.values} values per packet")
        report.job.update(values=self.values, mtu=link_mtu(self.values))
        self.hooks.install()
        try:
            self._build(topo, program.p4info, program.device_config, report)
            assert self.ctl is not None and self.fabric is not None
            job = self._new_job(workers, opts.fmts[0], report)  # the first format's job is the run's `job`
            report.job.update(id=job.job_id, tree=job.tree, workers=job.workers, grants=job.grants)
            self.ctl.start_watch()  # the controller stays connected: it notices failures and rebuilds trees
            report.files["controller_events"] = str(self.ctl.events_file)
            plan = plan_modes(opts.modes, opts.fmts)
            for index, run in enumerate(plan):
                if run.fmt and run.fmt != self.job_fmt:
                    self._new_job(workers, run.fmt, report)
                self._run_mode(run, workers, report, faults=index == len(plan) - 1 and run.mode == "innet")
            report.faults["controller_events"] = self.ctl.events()
            self._finish(report)
            if opts.cli:
                from mininet.cli import CLI

                self.log("Mininet CLI: the fabric stays up until you exit")
                CLI(self.fabric.net)
        finally:
            self.hooks.run()
        return report

    def _compile(self) -> CompiledProgram:
        opts = self.opts
        assert self.target is not None
        if opts.compiled is not None:
            if opts.compiled.target != self.target.name or opts.compiled.source.resolve() != opts.program.resolve():
                raise RunError(f"the compiled program is {opts.compiled.source} for {opts.compiled.target}, "
                               f"not {opts.program} for {self.target.name}")
            return opts.compiled
        values = opts.values if opts.values is not None else run_values(self.target.name)
        self.log(f"compiling {opts.program.name} for {self.target.name} ({values} values per packet)")
        try:
            return self.target.compile(opts.program, opts.out / "build", defines=run_defines(self.target.name, values))
        except TargetError as exc:
            raise RunError(f"cannot compile {opts.program}: {exc}") from None

    def _link_options(self) -> dict[str, Any]:
        lopts: dict[str, Any] = dict(self.opts.faults.link_options())
        if self.opts.bw:
            lopts["bw"] = self.opts.bw
        return lopts

    def _all_hosts(self, topo: FabricTopo) -> list[str]:
        return sorted(topo.hosts(), key=lambda h: int(h[1:]) if h[1:].isdigit() else h)

    def _worker_hosts(self, topo: FabricTopo) -> list[str]:
        hosts = [h for h in self._all_hosts(topo) if h not in self.opts.spares]
        if self.opts.workers is not None:
            if self.opts.workers > len(hosts):
                raise RunError(f"--workers {self.opts.workers}: the topology has only {len(hosts)} hosts")
            hosts = hosts[:self.opts.workers]
        if not hosts:
            raise RunError("the topology has no hosts to run workers on")
        return hosts

    def _build(self, topo: FabricTopo, p4info: Path, device_config: Path, report: RunReport) -> None:
        assert self.target is not None
        run = RunState()
        self.fabric = Fabric(topo, target=self.target, out_dir=self.opts.out, run=run, pcap=self.opts.pcap,
                             verbose=self.opts.verbose, intf_tag=run.tag, tls=self.opts.tls,
                             priority_queues=self.opts.priority_queues, mtu=link_mtu(self.values),
                             cluster=ClusterSpec.parse(self.opts.cluster, self.opts.ssh_config)
                             if self.opts.cluster else None)
        self.hooks.add(self.fabric.stop)
        self.log(f"starting {len(topo.switches())} {self.target.name} switches and {len(topo.hosts())} hosts "
                 f"({topo.title}); logs in {self.fabric.log_dir}")
        self.fabric.start()
        topology_file = self.opts.out / "topology.yaml"
        self.fabric.write_topology(topology_file)
        report.files["topology"] = str(topology_file)
        if self.fabric.cluster is not None:
            report.files["placement"] = str(write_placement(self.opts.out / "placement.json", self.fabric.net))
        if self.fabric.pki is not None:
            report.files["pki_ca"] = str(self.fabric.pki.ca_cert)
        self.ctl = FabricController(self.opts.out, topology_file, p4info, device_config, owner=run.run_id,
                                    pid_file=run.pid_file("controller-watch"))
        self.hooks.add(self.ctl.close)
        self.log("controller: pushing the pipeline and forwarding (p4ina ctl)")
        self.ctl.push_pipeline(uplinks=self.opts.uplinks, rpc_timeout=pipeline_timeout(self.values))

    def _new_job(self, workers: list[str], fmt: str, report: RunReport) -> JobInfo:
        """A job whose result format is `fmt`, on the first job's tree root (the same tree for every format).

        Earlier formats' jobs stay: a new job on the slots of a deleted one would meet the old rounds' state there,
        and since new workers start again at step 0 the switch drops their packets as stale (docs/protocol.md,
        "Slots and versions"). Every format therefore needs its own `--slots` on each switch."""
        assert self.ctl is not None
        if self.job is None:
            self.job = self.ctl.create_job(workers, slots=self.pool, quant=fmt, values=self.values)
        else:
            # FabricController.create_job has no root option: the same `p4ina ctl job create`, with --root
            root = str(self.job.tree.get("root"))
            try:
                created = self.ctl.ctl("job", "create", *workers, "--slots", str(self.pool), "--quant", fmt,
                                       "--root", root, "--values", str(self.values))
            except RunError as exc:
                raise RunError(f"--fmt {fmt}: {exc} (each format holds --slots {self.pool} on every switch "
                               "of its tree: lower --slots or give fewer formats)") from None
            self.job = self.ctl.job(int(created["job"]))
        self.job_fmt = fmt
        report.job.setdefault("by_format", {})[fmt] = {"id": self.job.job_id, "root": self.job.tree.get("root")}
        self.log(f"job {self.job.job_id} ({fmt}): {len(workers)} workers, tree root {self.job.tree.get('root')}")
        self._configure_hosts(workers)
        return self.job

    def _configure_hosts(self, workers: list[str]) -> None:
        """Each worker reaches its leaf switch's address directly on its link (on-link route, static ARP)."""
        assert self.fabric is not None and self.job is not None and self.ctl is not None
        for host_name in workers:
            host = self.fabric.node(host_name)
            intf = host.defaultIntf()
            leaf = self.job.worker(host_name)["switch"]
            ip, mac = self.ctl.switch_address(leaf)
            host.cmd(f"ip route replace {SWITCH_SUBNET} dev {intf}")
            host.cmd(f"ip neigh replace {ip} lladdr {mac} dev {intf} nud permanent")

    # -- one mode --

    def _run_mode(self, run: ModeRun, workers: list[str], report: RunReport, *, faults: bool = False) -> None:
        """Run one mode on every worker host; `faults`: the timed fault events fire during this one."""
        assert self.fabric is not None and self.job is not None
        opts = self.opts
        name = run.name
        outputs = {h: opts.out / "workers" / f"{run.tag}-{h}.jsonl" for h in workers}
        (opts.out / "workers").mkdir(parents=True, exist_ok=True)
        before = self._link_counters()
        procs = {}
        peers = [self.fabric.node(h).IP() for h in workers]
        for rank, host in enumerate(workers):
            procs[host] = self.fabric.popen(host, self._worker_argv(run, rank, host, outputs[host], peers),
                                            name=f"{run.tag}-{host}",
                                            log_file=opts.out / "logs" / f"{run.tag}-{host}.log", cwd=REPO)
        injector = None
        if faults and opts.faults.events:
            self.replacer = WorkerReplacer(self, run, workers, self.spares, procs, outputs) if self.spares else None
            injector = FaultInjector(opts.faults.events, self._fault_actions()).start()
        self.log(f"{name}: {len(workers)} workers, {opts.size:,} floats x {opts.count} steps")
        try:
            self._wait(name, procs, outputs)
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
                proc.log_handle.close()
            if injector is not None:
                report.faults["fired"] = [r.as_dict() for r in injector.stop()]
            if self.replacer is not None:
                self.replacer.stop_standby()
        after = self._link_counters()
        for link, count in after.items():
            report.link_bytes.setdefault(link, {})[name] = count - before.get(link, 0)
        replacer, self.replacer = self.replacer, None
        hosts = [replacer.host_of(h) if replacer is not None else h for h in workers]
        results = [self._read_result(run, rank, hosts[rank], outputs[host]) for rank, host in enumerate(workers)]
        if replacer is not None:
            results = [replacer.with_first_steps(r, workers[rank]) for rank, r in enumerate(results)]
            report.faults.update(replacer.finish())
        report.worker_results += results
        report.modes.append(summarise(name, results, opts.size, opts.count, fmt=run.fmt))

    def _worker_argv(self, run: ModeRun, rank: int, host: str, output: Path, peers: list[str]) -> list[str]:
        assert self.fabric is not None and self.job is not None and self.ctl is not None
        opts = self.opts
        node = self.fabric.node(host)
        argv = [sys.executable, "-m", "p4fabric.hostproc", run.mode, "--rank", str(rank), "--world", str(len(peers)),
                "--size", str(opts.size), "--count", str(opts.count), "--seed", str(opts.seed), "--out", str(output),
                "--ip", node.IP()]
        if run.mode == "ring":
            return [*argv, "--peers", ",".join(peers)]
        if run.mode == "gloo":
            return [*argv, "--master", peers[0], "--ifname", node.defaultIntf().name]
        info = self.job.worker(host)
        switch_ip, switch_mac = self.ctl.switch_address(info["switch"])
        if self.spares:  # a run with spares: checkpoints, and the fixed exponent a spare can continue with
            argv += ["--exponent", str(fixed_exponent()), "--checkpoint",
                     str(opts.out / "workers" / f"{run.tag}-{host}.ckpt.json"),
                     "--max-retries", str(SPARE_RUN_RETRIES)]
        return [*argv, "--mac", node.MAC(), "--job", str(self.job.job_id), "--child", str(info["child_index"]),
                "--pool", str(self.job.slots), "--fmt", run.fmt, "--switch-ip", switch_ip,
                "--switch-mac", switch_mac, "--timeout", f"{opts.retx_timeout:g}",
                "--min-timeout", f"{opts.retx_min:g}", "--scale", str(self.job.scale),
                "--values", str(self.values), "--job-values", str(self.job.values),
                "--window", str(self.window)]

    def _wait(self, name: str, procs: dict[str, Any], outputs: dict[str, Path]) -> None:
        opts = self.opts
        total = opts.count * len(procs)
        deadline = time.monotonic() + opts.step_timeout * opts.count + 60
        progress_cm: Any = None
        task = None
        if opts.show_progress:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            progress_cm = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                   TimeElapsedColumn(), console=Console(stderr=True), transient=False)
            progress_cm.start()
            task = progress_cm.add_task(f"{name} steps", total=total)
        failed_at: float | None = None
        try:
            while any(p.poll() is None for p in list(procs.values())):
                if progress_cm is not None and task is not None:
                    progress_cm.update(task, completed=sum(_steps_done(o) for o in outputs.values()))
                if time.monotonic() > deadline:
                    raise RunError(f"{name}: workers did not finish within {opts.step_timeout:g} s per step")
                expected = self.replacer.replacing if self.replacer is not None else set()
                if failed_at is None and any(p.poll() not in (None, 0) and h not in expected
                                             for h, p in list(procs.items())):
                    failed_at = time.monotonic()  # a collective cannot finish without one of its ranks
                if failed_at is not None and time.monotonic() - failed_at > FAILED_RANK_GRACE:
                    break  # the others are stopped by the caller; their results say they did not finish
                time.sleep(0.2)
            if progress_cm is not None and task is not None:
                progress_cm.update(task, completed=sum(_steps_done(o) for o in outputs.values()))
        finally:
            if progress_cm is not None:
                progress_cm.stop()

    def _read_result(self, run: ModeRun, rank: int, host: str, output: Path) -> WorkerResult:
        final: dict[str, Any] | None = None
        steps: list[float] = []
        if output.exists():
            for line in output.read_text().splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if record.get("done"):
                    final = record
                elif "seconds" in record:
                    steps.append(float(record["seconds"]))
        if final is None:
            log = self.opts.out / "logs" / f"{run.tag}-{host}.log"
            tail = log.read_text().strip().splitlines()[-1:] if log.exists() else []
            return WorkerResult(host, rank, run.name, steps, False,
                                error=f"worker exited without a result{': ' + tail[0] if tail else ''}", fmt=run.fmt)
        return worker_result(run, rank, host, final, steps)

    # -- links and faults --

    def _link_counters(self) -> dict[str, int]:
        """Bytes both ways per link, read at a switch end (`/sys/class/net/<intf>/statistics`)."""
        assert self.fabric is not None
        out: dict[str, int] = {}
        for a, b, info in self.fabric.topo.links(withInfo=True):
            end, port = (a, info["port1"]) if self.fabric.topo.isSwitch(a) else (b, info["port2"])
            intf = self.fabric.node(end).intfs.get(port)
            if intf is None:
                continue
            total = 0
            for counter in ("tx_bytes", "rx_bytes"):
                try:
                    total += int(Path(f"/sys/class/net/{intf.name}/statistics/{counter}").read_text())
                except (OSError, ValueError):
                    pass
            out[f"{a}-{b}"] = total
        return out

    def _fault_actions(self) -> dict[str, Callable[[FaultEvent], str]]:
        return {"link-down": self._link_down, "link-up": self._link_up, "kill-switch": self._kill_switch,
                "bitflip": self._bitflip, "kill-worker": self._kill_worker}

    def _kill_worker(self, event: FaultEvent) -> str:
        if self.replacer is None:
            raise RunError("--kill-worker hits the last in-network mode, which has no spare")
        return self.replacer.kill(event)

    def _link_down(self, event: FaultEvent) -> str:
        assert self.fabric is not None and self.ctl is not None
        a, b = event.target
        self.fabric.set_link(a, b, up=False)
        if self.fabric.topo.isSwitch(a) and self.fabric.topo.isSwitch(b):
            # P4Runtime has no port-status notification: the emulation tells the controller, as an operator would
            return f"link {a}-{b} down; controller: {self.ctl.link(a, b, up=False)}"
        host = b if self.fabric.topo.isSwitch(a) else a
        if self.replacer is not None and host in self.replacer.procs:
            # the emulation tells the scheduler, as the switch's port-down would: the cut-off worker is fenced
            # (killed: it must not come back as a second rank 0) and its rank moves to a spare
            return f"link {a}-{b} down; " + self.replacer.kill(FaultEvent(event.at, "kill-worker", (host,)))
        return f"link {a}-{b} down (a host link: its worker is cut off)"

    def _link_up(self, event: FaultEvent) -> str:
        assert self.fabric is not None and self.ctl is not None
        a, b = event.target
        self.fabric.set_link(a, b, up=True)
        if self.fabric.topo.isSwitch(a) and self.fabric.topo.isSwitch(b):
            return f"link {a}-{b} up; controller: {self.ctl.link(a, b, up=True)}"
        return f"link {a}-{b} up"

    def _kill_switch(self, event: FaultEvent) -> str:
        assert self.fabric is not None and self.ctl is not None
        name = event.target[0]
        killed_at = time.time()
        self.fabric.switch(name).kill()
        # nobody tells the controller: its watcher sees the P4Runtime stream break
        return f"switch {name} killed (SIGKILL); controller: {self.ctl.wait_for_recovery(name, killed_at)}"

    def _bitflip(self, event: FaultEvent) -> str:
        """Flip one bit of a value cell of the job's slots on the switch: an in-progress cell if there is one."""
        assert self.fabric is not None and self.ctl is not None and self.job is not None and self.target is not None
        name = event.target[0]
        grant = self.ctl.job(self.job.job_id).grants.get(name)
        if grant is None:
            return f"{name} holds no slots of job {self.job.job_id}: nothing to corrupt"
        switch = self.fabric.switch(name).running
        if switch is None:
            raise FabricError(f"{name} is not running")
        cells = [((grant["slot_base"] + s) << 1) | v for s in range(grant["slot_count"]) for v in (0, 1)]
        first = "0" * max(2, len(f"{self.values - 1:o}"))  # element 0's octal name (p4src/include/defines.p4)
        count_reg, value_reg = f"{AGG_REGISTERS}.agg_child_count", f"{AGG_REGISTERS}.agg_v{first}"
        chosen = next((c for c in cells if self.target.read_register(switch, count_reg, c)), cells[0])
        old = self.target.read_register(switch, value_reg, chosen)
        new = old ^ (1 << BITFLIP_BIT)
        self.target.write_register(switch, value_reg, chosen, new)
        return f"{value_reg}[{chosen}] {old:#010x} -> {new:#010x}"

    # -- report --

    def _finish(self, report: RunReport) -> None:
        for m in report.modes:
            if m.workers_failed:
                failed = [r for r in report.worker_results if r.mode == m.mode and r.error]
                report.errors.append(f"{m.mode}: {m.workers_failed} worker(s) failed, first: "
                                     f"{failed[0].host}: {failed[0].error}")
        write_json(report, self.opts.out)
        if not self.opts.plots:
            return
        try:
            plot(report, self.opts.out)
        except Exception as exc:  # plots are a convenience; the JSON report is the result
            report.errors.append(f"plotting failed: {exc}")
        write_json(report, self.opts.out)


def run_values(target: str) -> int:
    """Values per packet a run on `target` compiles for when `--values` is not given."""
    return DEFAULT_VALUES.get(target, EMBEDDED_DEFAULT_VALUES)


def run_slots(target: str) -> int:
    """A job's slot pool on `target` when `--slots` is not given."""
    return DEFAULT_SLOTS.get(target, EMBEDDED_DEFAULT_SLOTS)


def run_defines(target: str, values: int) -> dict[str, str]:
    """The `-D` defines a run compiles the program with on `target`: its values per packet and, on the embedded
    target, register arrays of `EMBEDDED_AGG_SLOTS` slots (real BMv2 keeps the program's own)."""
    defines = {"AGG_VALUES": str(values)}
    if target not in DEFAULT_SLOTS:
        defines["AGG_SLOTS"] = str(EMBEDDED_AGG_SLOTS)
    return defines


def link_mtu(values: int) -> int | None:
    """The links' MTU for packets of `values` int32 values: None (the kernel's 1500) when they fit, else jumbo."""
    from hostagent.protocol import FMT_INT32, ipv4_total_len

    return None if ipv4_total_len(FMT_INT32, values) <= ETHERNET_MTU else JUMBO_MTU


def pipeline_timeout(values: int) -> float | None:
    """Deadline of SetForwardingPipelineConfig for a build of `values` values per packet (None: the controller's
    30 s): an embedded switch loads code for every element, so wide builds take it minutes on a loaded host."""
    return None if values <= 64 else min(1200.0, 30.0 * values / 64)


def pipeline_values(p4info: Path) -> int:
    """Values per packet of a compiled p4ina program, from its P4Info (what the controller reads as well)."""
    from controller.p4info import P4InfoHelper, load_p4info
    from controller.program import pipeline_values as values_of

    return values_of(P4InfoHelper(load_p4info(p4info)))


def worker_result(run: ModeRun, rank: int, host: str, final: dict[str, Any], steps: list[float]) -> WorkerResult:
    """A worker's final hostproc record as a `WorkerResult` (`steps`: the per-step records, if the final lacks them).

    A record without `within_bound` (a bit-exact-only hostproc) counts as within bound exactly when it is exact."""
    exact = bool(final.get("exact"))
    return WorkerResult(host, rank, run.name, [float(s) for s in final.get("step_seconds", steps)], exact,
                        float(final.get("max_abs_error", 0.0)),
                        {k: float(v) for k, v in (final.get("stats") or {}).items() if isinstance(v, int | float)},
                        str(final.get("error", "")), within_bound=bool(final.get("within_bound", exact)),
                        fmt=run.fmt, error_bound=float(final.get("error_bound", 0.0)))


def _steps_done(path: Path) -> int:
    try:
        return sum(1 for line in path.read_text().splitlines() if line.startswith('{"step"'))
    except OSError:
        return 0
