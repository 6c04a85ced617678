"""The report of a `p4ina run`: per-step times and goodput per mode (in-network, host ring), per-worker reliability
counters, bytes per link, faults and whether every worker's result equals the local reference. Written as
`report.json`, shown as a summary table, and plotted (`steps.png`, `links.png`) into the output folder."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BYTES_PER_ELEMENT = 4  # float32 tensors


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
    def exact(self) -> bool:
        """Every worker of every mode finished and matched the reference, and nothing failed."""
        return bool(self.modes) and all(m.exact for m in self.modes) and not self.errors

    def mode(self, name: str) -> ModeSummary | None:
        return next((m for m in self.modes if m.mode == name), None)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["exact"] = self.exact
        data["tensor_bytes"] = self.size * BYTES_PER_ELEMENT
        return data


def summarise(mode: str, results: Sequence[WorkerResult], size: int, count: int) -> ModeSummary:
    """Combine the workers' results of one mode."""
    ok = [r for r in results if not r.error]
    steps = min((len(r.step_seconds) for r in ok), default=0)
    per_step = [max(r.step_seconds[i] for r in ok) for i in range(steps)]
    median = statistics.median(per_step) if per_step else 0.0
    goodput = size * BYTES_PER_ELEMENT * 8 / median / 1e9 if median > 0 else 0.0
    return ModeSummary(
        mode=mode, steps=steps, step_seconds=[round(s, 6) for s in per_step], median_seconds=round(median, 6),
        goodput_gbps=round(goodput, 6),
        exact=bool(results) and len(ok) == len(results) and steps == count and all(r.exact for r in ok),
        retransmissions=int(sum(r.stats.get("retransmissions", 0) for r in ok)),
        checksum_failures=int(sum(r.stats.get("checksum_failures", 0) for r in ok)),
        workers_failed=len(results) - len(ok),
        max_abs_error=max((r.max_abs_error for r in ok), default=0.0),
    )


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
        fig.tight_layout()
        path = out_dir / "steps.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
        report.files["steps_plot"] = str(path)
    if report.link_bytes:
        links = sorted(report.link_bytes)
        fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(links) + 2), 4))
        modes = sorted({mode for link in links for mode in report.link_bytes[link]})
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
                            ("csum fail", "right"), ("max error", "right"), ("exact", "center")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for m in report.modes:
        table.add_row(m.mode, f"{m.median_seconds * 1000:.1f} ms", f"{m.goodput_gbps * 1000:.1f} Mbit/s",
                      str(m.retransmissions), str(m.checksum_failures), f"{m.max_abs_error:g}",
                      "[green]yes[/green]" if m.exact else "[red]NO[/red]")
    console.print(table)
    innet, ring = report.mode("in-network"), report.mode("ring")
    if innet and ring and innet.median_seconds > 0 and ring.median_seconds > 0:
        console.print(f"in-network vs host ring: {ring.median_seconds / innet.median_seconds:.2f}x "
                      f"({'faster' if innet.median_seconds < ring.median_seconds else 'slower'})")
    for record in report.faults.get("fired", []):
        mark = "[green]ok[/green]" if record["ok"] else "[red]failed[/red]"
        console.print(f"fault {record['kind']} {'-'.join(record['target'])} at {record['fired_at']:.2f} s: "
                      f"{mark} {record['outcome']}")
    for error in report.errors:
        console.print(f"[red]error:[/red] {error}")
    verdict = "[green]exact[/green]" if report.exact else "[red]NOT exact[/red]"
    console.print(f"result: {verdict}; report: {report.files.get('report', report.out_dir)}")
