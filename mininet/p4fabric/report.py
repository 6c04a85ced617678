"""The report of a `p4ina run`: per-step times and goodput per mode (host ring, gloo, in-network per format),
per-worker reliability counters, bytes per link, faults, and whether every worker's result is correct: equal to the
local reference (int32, ring, gloo) or within the documented error bound (int16/int8). Written as `report.json`,
shown as a summary table, and plotted (`steps.png`, `links.png`) into the output folder."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BYTES_PER_ELEMENT = 4  # float32 tensors
#: Formats whose verdict is "within the error bound" rather than "bit-exact" (hostagent/quantize.py).
QUANTIZED_FORMATS = ("int16", "int8")


def is_quantized(fmt: str) -> bool:
    """Whether a mode's results are judged against the quantization bound instead of bit-exactness."""
    return fmt in QUANTIZED_FORMATS


@dataclass
class WorkerResult:
    """What one worker process reported for one mode."""

    host: str
    rank: int
    mode: str
    step_seconds: list[float]
    exact: bool
    max_abs_error: float = 0.0
    stats: dict[str, float] = field(default_factory=dict)
    error: str = ""
    #: The result stayed within the documented quantization bound on every step (equals `exact` for ring/gloo).
    within_bound: bool = False
    fmt: str = ""  # the in-network format; "" for ring and gloo
    error_bound: float = 0.0  # largest per-element error bound over the steps (int16/int8; 0: must be exact)

    @property
    def correct(self) -> bool:
        """The verdict for this worker: bit-exact, or within the bound for a quantized format."""
        return not self.error and (self.within_bound if is_quantized(self.fmt) else self.exact)


@dataclass
class ModeSummary:
    mode: str
    steps: int
    step_seconds: list[float]  # per step: the slowest worker (the collective ends when the last one has its result)
    median_seconds: float
    goodput_gbps: float  # tensor bits per second of the median step (algorithm bandwidth)
    exact: bool
    retransmissions: int
    checksum_failures: int
    workers_failed: int
    max_abs_error: float = 0.0  # largest |result - reference| over workers and steps (quantized formats)
    #: The verdict: every worker finished every step and is correct (`WorkerResult.correct`). For int32, ring and
    #: gloo it equals `exact`; for int16/int8 it means within the bound, while `exact` says whether it was bit-equal.
    correct: bool = False
    fmt: str = ""  # the in-network format; "" for ring and gloo
    error_bound: float = 0.0  # largest per-element error bound any worker checked against (int16/int8)


@dataclass
class RunReport:
    topology: str
    target: str
    size: int
    count: int
    workers: list[str]
    modes: list[ModeSummary] = field(default_factory=list)
    worker_results: list[WorkerResult] = field(default_factory=list)
    link_bytes: dict[str, dict[str, int]] = field(default_factory=dict)
    faults: dict[str, Any] = field(default_factory=dict)
    job: dict[str, Any] = field(default_factory=dict)
    out_dir: str = ""
    files: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def correct(self) -> bool:
        """The run's verdict: every mode correct (bit-exact, or within the bound for int16/int8), nothing failed."""
        return bool(self.modes) and all(m.correct for m in self.modes) and not self.errors

    @property
    def exact(self) -> bool:
        """The verdict under its historical name (`report.json`'s `exact` key): same as `correct`."""
        return self.correct

    @property
    def bit_exact(self) -> bool:
        """Stricter than the verdict: every mode bit-equal to the reference, quantized ones included."""
        return self.correct and all(m.exact for m in self.modes)

    def mode(self, name: str) -> ModeSummary | None:
        return next((m for m in self.modes if m.mode == name), None)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["exact"] = data["correct"] = self.correct
        data["bit_exact"] = self.bit_exact
        data["tensor_bytes"] = self.size * BYTES_PER_ELEMENT
        return data


def summarise(mode: str, results: Sequence[WorkerResult], size: int, count: int, fmt: str = "") -> ModeSummary:
    """Combine the workers' results of one mode (`fmt`: its in-network format, "" for ring and gloo)."""
    ok = [r for r in results if not r.error]
    steps = steps_of(ok)
    complete = bool(results) and len(ok) == len(results) and steps == count
    per_step = [max(r.step_seconds[i] for r in ok) for i in range(steps)]
    median = statistics.median(per_step) if per_step else 0.0
    goodput = size * BYTES_PER_ELEMENT * 8 / median / 1e9 if median > 0 else 0.0
    return ModeSummary(
        mode=mode, steps=steps, step_seconds=[round(s, 6) for s in per_step], median_seconds=round(median, 6),
        goodput_gbps=round(goodput, 6),
        exact=complete and all(r.exact for r in ok),
        retransmissions=int(sum(r.stats.get("retransmissions", 0) for r in ok)),
        checksum_failures=int(sum(r.stats.get("checksum_failures", 0) for r in ok)),
        workers_failed=len(results) - len(ok),
        max_abs_error=max((r.max_abs_error for r in ok), default=0.0),
        correct=complete and all(r.correct for r in ok), fmt=fmt,
        error_bound=max((r.error_bound for r in ok), default=0.0),
    )


def steps_of(results: Sequence[WorkerResult]) -> int:
    """Steps every one of `results` finished."""
    return min((len(r.step_seconds) for r in results), default=0)


def write_json(report: RunReport, out_dir: Path) -> Path:
    path = out_dir / "report.json"
    report.files["report"] = str(path)
    path.write_text(json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n")
    return path


def plot(report: RunReport, out_dir: Path) -> list[Path]:
    """PNG plots: step time per mode, and bytes per link. Returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[Path] = []
    if any(m.step_seconds for m in report.modes):
        fig, (ax_time, ax_good) = plt.subplots(1, 2, figsize=(11, 4))
        for m in report.modes:
            ax_time.plot(range(1, len(m.step_seconds) + 1), [s * 1000 for s in m.step_seconds], marker="o",
                         label=m.mode)
        ax_time.set_xlabel("step")
        ax_time.xaxis.get_major_locator().set_params(integer=True)
        ax_time.set_ylabel("time (ms)")
        ax_time.set_title(f"all-reduce of {report.size:,} floats, {len(report.workers)} workers")
        ax_time.legend()
        ax_good.bar([m.mode for m in report.modes], [m.goodput_gbps * 1000 for m in report.modes], color="tab:green")
        ax_good.set_ylabel("goodput (Mbit/s, median step)")
        ax_good.tick_params(axis="x", labelrotation=20)
        fig.tight_layout()
        path = out_dir / "steps.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
        report.files["steps_plot"] = str(path)
    if report.link_bytes:
        links = sorted(report.link_bytes)
        fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(links) + 2), 4))
        seen = {mode for link in links for mode in report.link_bytes[link]}
        modes = [m.mode for m in report.modes if m.mode in seen]  # run order
        modes += sorted(seen - set(modes))
        width = 0.8 / max(1, len(modes))
        for i, mode in enumerate(modes):
            ax.bar([x + i * width for x in range(len(links))],
                   [report.link_bytes[link].get(mode, 0) / 1e6 for link in links], width=width, label=mode)
        ax.set_xticks([x + width * (len(modes) - 1) / 2 for x in range(len(links))])
        ax.set_xticklabels(links, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("MB (both directions)")
        ax.set_title("bytes per link")
        ax.legend()
        fig.tight_layout()
        path = out_dir / "links.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
        report.files["links_plot"] = str(path)
    return written


def print_summary(report: RunReport) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=False)
    table = Table(title=f"p4ina run: {report.topology} on {report.target}, {len(report.workers)} workers, "
                        f"{report.size:,} floats x {report.count}")
    for column, justify in (("mode", "left"), ("median step", "right"), ("goodput", "right"), ("retx", "right"),
                            ("csum fail", "right"), ("max error", "right"), ("exact", "center"),
                            ("correct", "center")):
        table.add_column(column, justify=justify, no_wrap=column == "mode")  # type: ignore[arg-type]
    for m in report.modes:
        verdict = "[green]yes[/green]" if m.correct else "[red]NO[/red]"
        if m.correct and is_quantized(m.fmt):
            verdict = "[green]within bound[/green]"
        table.add_row(m.mode, f"{m.median_seconds * 1000:.1f} ms", f"{m.goodput_gbps * 1000:.1f} Mbit/s",
                      str(m.retransmissions), str(m.checksum_failures), _error_cell(m),
                      "yes" if m.exact else "no", verdict)
    console.print(table)
    for line in speedups(report):
        console.print(line)
    for record in report.faults.get("fired", []):
        mark = "[green]ok[/green]" if record["ok"] else "[red]failed[/red]"
        console.print(f"fault {record['kind']} {'-'.join(record['target'])} at {record['fired_at']:.2f} s: "
                      f"{mark} {record['outcome']}")
    for rep in report.faults.get("replacements", []):
        first = rep.get("first_exact_ms")
        console.print(f"worker replaced: {rep['dead']} -> {rep['spare']} (rank {rep['rank']}): first exact result "
                      f"{'never' if first is None else f'{first:.0f} ms'} after the kill; steps after it "
                      f"{'all exact' if rep.get('all_exact_after') else '[red]NOT all exact[/red]'}")
    for error in report.errors:
        console.print(f"[red]error:[/red] {error}")
    if not report.correct:
        verdict = "[red]NOT correct[/red]"
    elif report.bit_exact:
        verdict = "[green]exact[/green]"
    else:
        verdict = "[green]correct[/green] (quantized formats within their error bound)"
    console.print(f"result: {verdict}; report: {report.files.get('report', report.out_dir)}")


def _error_cell(m: ModeSummary) -> str:
    return f"{m.max_abs_error:g} (bound {m.error_bound:.3g})" if m.error_bound else f"{m.max_abs_error:g}"


def speedups(report: RunReport) -> list[str]:
    """One line per in-network mode and host baseline (ring, gloo) that both have a median step time."""
    lines = []
    for m in report.modes:
        if not m.mode.startswith("in-network") or m.median_seconds <= 0:
            continue
        for base in (report.mode("ring"), report.mode("gloo")):
            if base is not None and base.median_seconds > 0:
                ratio = base.median_seconds / m.median_seconds
                lines.append(f"{m.mode} vs {base.mode}: {ratio:.2f}x "
                             f"({'faster' if m.median_seconds < base.median_seconds else 'slower'})")
    return lines
