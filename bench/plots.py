"""PNG figures for `p4ina bench`, drawn from the benchmarks' JSON results.

Each figure is a small function registered for one benchmark name (`@figure("switch_pps")`). It returns a
matplotlib `Figure`, or None when the results lack what it needs (a quick run has fewer points; an older JSON lacks a
section). `plot_all` saves what it gets and never lets a figure's failure escape: the JSON is the result, plots are
a view of it. Figures are `matplotlib.figure.Figure` objects, not pyplot state, so no backend is selected globally
and PNGs are written with Agg.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator
from matplotlib.typing import LineStyleType

Plotter = Callable[[dict[str, Any]], Figure | None]

#: benchmark name -> [(figure name, plotter)], in registration order.
FIGURES: dict[str, list[tuple[str, Plotter]]] = defaultdict(list)
DPI = 110


def figure(benchmark: str, name: str | None = None) -> Callable[[Plotter], Plotter]:
    """Register a plotter for `benchmark`; its PNG is `<benchmark>[-<name>].png`."""

    def register(fn: Plotter) -> Plotter:
        FIGURES[benchmark].append((name or "", fn))
        return fn

    return register


def plot_all(out_dir: Path, results: dict[str, dict[str, Any]]) -> list[Path]:
    """Draw every registered figure whose benchmark is in `results` (name -> its JSON data) into `out_dir`; the
    PNGs written. A figure that cannot be drawn is skipped with a one-line note on stderr."""
    written: list[Path] = []
    for bench, data in results.items():
        if not isinstance(data, dict):
            continue
        for name, plotter in FIGURES.get(bench, []):
            path = out_dir / (f"{bench}-{name}.png" if name else f"{bench}.png")
            fig: Figure | None = None
            try:
                fig = plotter(data)
                if fig is None:
                    continue
                fig.savefig(path, dpi=DPI)
            except Exception as exc:  # a figure is a convenience: report it, keep the results and other figures
                print(f"p4ina bench: figure {path.name} skipped: {type(exc).__name__}: {exc}".splitlines()[0],
                      file=sys.stderr)
                path.unlink(missing_ok=True)
                continue
            written.append(path)
    return written


# -- helpers --------------------------------------------------------------------------------------------------------


def _rows(data: Any, *keys: str) -> list[dict[str, Any]]:
    """The list of dict rows at data[keys[0]][keys[1]]..., or [] when any part is missing or of another shape."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _points(rows: Iterable[dict[str, Any]], x: str, y: str) -> tuple[list[float], list[float]]:
    """(xs, ys) of the rows that have numbers for both keys, sorted by x."""
    pairs = sorted((xv, yv) for r in rows if (xv := _num(r.get(x))) is not None and (yv := _num(r.get(y))) is not None)
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _new(panels: int, width: float = 5.0, height: float = 4.0) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(width * panels, height), layout="constrained")
    return fig, [fig.add_subplot(1, panels, i + 1) for i in range(panels)]


def _bytes_label(n: float) -> str:
    for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n:g} B"


# -- switch ---------------------------------------------------------------------------------------------------------

_SWITCH_LABELS = {"l3_forward_file": "L3 forward\nfile mode", "aggregate_file": "aggregation\nfile mode",
                  "l3_forward_live_veth": "L3 forward\nlive, veth ring",
                  "l3_forward_live_veth_socket": "L3 forward\nlive, per packet"}


@figure("switch_pps")
def switch_pps(data: dict[str, Any]) -> Figure | None:
    """Packets/s per program and mode: wall-clock and CPU-time rates, with the BMv2 reference."""
    runs = [(k, v) for k, v in data.items()
            if k != "summary" and isinstance(v, dict) and _num(v.get("pps")) is not None]
    if not runs:
        return None
    fig, (ax,) = _new(1, 7.0)
    xs = range(len(runs))
    ax.bar([x - 0.2 for x in xs], [v["pps"] for _, v in runs], 0.4, label="wall clock")
    cpu = [_num(v.get("cpu_pps")) for _, v in runs]
    if any(c is not None for c in cpu):
        ax.bar([x + 0.2 for x in xs], [c or 0.0 for c in cpu], 0.4, label="CPU time", hatch="//", alpha=0.7)
    ax.set_xticks(list(xs), [_SWITCH_LABELS.get(k, k) for k, _ in runs])
    ref = _num(data.get("bmv2_aggregate_pps_reference"))
    if ref is not None:
        ax.axhline(ref, color="tab:red", linestyle="--", label=f"BMv2 aggregation ({ref:,.0f})")
    ax.margins(y=0.3)  # room for the legend above the bars
    ax.set_ylabel("packets/s")
    ax.set_title("embedded switch packet rate")
    ax.legend(loc="upper left", ncols=3, fontsize="small")
    return fig


# -- host agent -----------------------------------------------------------------------------------------------------


@figure("hostagent_allreduce", "rates")
def hostagent_rates(data: dict[str, Any]) -> Figure | None:
    """The agent's own packet rates (frame fill, parse, worker over loopback)."""
    rates = {k: v for k, v in (data.get("agent_pps") or {}).items() if _num(v) is not None}
    if not rates:
        return None
    fig, (ax,) = _new(1, 6.0)
    ax.bar([k.removesuffix("_pps").replace("_", " ") for k in rates], list(rates.values()), color="tab:purple")
    ax.set_yscale("log")
    ax.set_ylabel("packets/s")
    ax.set_title("host agent rates")
    ax.tick_params(axis="x", labelrotation=15)
    return fig


@figure("hostagent_allreduce")
def hostagent_allreduce(data: dict[str, Any]) -> Figure | None:
    """All-reduce time vs size: in-network (embedded switch) vs host ring vs gloo, and the adaptive threshold."""
    rows = _rows(data, "allreduce")
    series = [(label, _points(rows, "bytes", key)) for label, key in
              (("in-network", "in_network_s"), ("host ring", "ring_s"), ("gloo", "gloo_s"))]
    series = [(label, pts) for label, pts in series if pts[0]]
    if not series:
        return None
    fig, (ax,) = _new(1, 6.0)
    for label, (xs, ys) in series:
        ax.plot(xs, [y * 1000 for y in ys], marker="o", label=label)
    threshold = _num((data.get("adaptive") or {}).get("threshold_bytes"))
    if threshold:
        ax.axvline(threshold, color="grey", linestyle=":", label=f"adaptive threshold ({_bytes_label(threshold)})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("tensor bytes")
    ax.set_ylabel("time (ms)")
    ax.set_title(f"all-reduce, {data.get('workers', '?')} workers on one machine")
    ax.legend()
    return fig


@figure("hostagent_train")
def hostagent_train(data: dict[str, Any]) -> Figure | None:
    """Data-parallel training: accuracy and wall time, in-network vs ring vs one process."""
    runs = {k: v for k, v in data.items() if isinstance(v, dict) and _num(v.get("parallel_accuracy")) is not None}
    if not runs:
        return None
    fig, (acc, sec) = _new(2, 4.5)
    first = next(iter(runs.values()))
    labels = ["single process", *runs]
    acc.bar(labels, [first.get("single_accuracy") or 0.0, *(v["parallel_accuracy"] for v in runs.values())])
    acc.set_ylim(0, 1)
    acc.set_ylabel("test accuracy")
    sec.bar(labels, [first.get("single_seconds") or 0.0, *(v.get("parallel_seconds") or 0.0 for v in runs.values())],
            color="tab:orange")
    sec.set_ylabel("training time (s)")
    fig.suptitle(f"digits, {first.get('workers', '?')} ranks, {first.get('epochs', '?')} epochs")
    return fig


# -- fabric (bench.fabric) -----------------------------------------------------------------------------------

#: Keys of an `in_network_vs_ring` row per mode, and their labels; colours stay fixed per mode across panels.
_MODES = (("in_network", "in-network"), ("ring", "ring"), ("gloo", "gloo"))


@figure("fabric", "innet_vs_ring")
def fabric_comparison(data: dict[str, Any]) -> Figure | None:
    """In-network vs ring (and gloo if measured) on the emulated fabric: time vs size, and bytes per link against
    the theory."""
    rows = [r for r in _rows(data, "in_network_vs_ring") if _num(r.get("size")) is not None]
    modes = [(i, key, label) for i, (key, label) in enumerate(_MODES)
             if any(isinstance(r.get(key), dict) for r in rows)]
    if not modes:
        return None
    fig, (ax_t, ax_b) = _new(2, 6.0)
    for i, key, label in modes:
        xs, ys = _points(({"bytes": 4 * r["size"], **(r.get(key) or {})} for r in rows), "bytes", "median_seconds")
        ax_t.plot(xs, [y * 1000 for y in ys], marker="o", label=label, color=f"C{i}")
    ax_t.set_xscale("log", base=2)
    ax_t.set_xlabel("tensor bytes")
    ax_t.set_ylabel("median step time (ms)")
    ax_t.set_title(f"{data.get('topology', 'fabric')}, {data.get('workers', '?')} workers")
    ax_t.legend()
    last = rows[-1]
    per_mode = {key: (last.get(key) or {}).get("bytes_per_link") or {} for _, key, _ in modes}
    links = sorted({link for per in per_mode.values() for link in per})
    if not links:
        ax_b.set_visible(False)
        return fig
    width = 0.8 / len(modes)
    for j, (i, key, label) in enumerate(modes):
        offset = (j - (len(modes) - 1) / 2) * width
        ax_b.bar([x + offset for x in range(len(links))], [per_mode[key].get(k, 0) / 1e3 for k in links], width,
                 label=label, color=f"C{i}")
    ax_b.set_xticks(range(len(links)), links, rotation=45, ha="right")
    n, size = _num(data.get("workers")), float(last["size"])
    tensor = 4 * size
    if n:  # payload both ways on a host link; headers and retransmissions come on top
        ax_b.axhline(2 * tensor / 1e3, color="C0", linestyle=":", label="in-network theory: 2S")
        ax_b.axhline(2 * 2 * (n - 1) / n * tensor / 1e3, color="C1", linestyle=":", label="ring theory: 2 x 2(N-1)/N S")
    ax_b.margins(y=0.35)  # room for the legend above the bars
    ax_b.set_ylabel("kB per link (both directions)")
    ax_b.set_title(f"bytes per link, {_bytes_label(tensor)} tensor")
    ax_b.legend(fontsize="small", ncols=2, loc="upper left")
    return fig


@figure("fabric", "loss")
def fabric_loss(data: dict[str, Any]) -> Figure | None:
    """Loss sweep: in-network goodput and retransmissions vs link loss."""
    rows = _rows(data, "loss_sweep")
    # a rate run in several rounds is plotted at its median goodput (`median_goodput_gbps`), else its one run's
    rows = [{**r, "goodput_gbps": r.get("median_goodput_gbps", r.get("goodput_gbps"))} for r in rows]
    xs, goodput = _points(rows, "loss_percent", "goodput_gbps")
    if not xs:
        return None
    fig, (ax_g, ax_r) = _new(2, 5.0)
    ax_g.plot(xs, [g * 1000 for g in goodput], marker="o")
    ax_g.set_xlabel("loss per link (%)")
    ax_g.set_ylabel("goodput (Mbit/s)")
    ax_g.set_title("in-network goodput under loss")
    rx, retx = _points(rows, "loss_percent", "retransmissions")
    ax_r.plot(rx, retx, marker="o", color="tab:red")
    ax_r.set_xlabel("loss per link (%)")
    ax_r.set_ylabel("retransmissions")
    ax_r.set_title("retransmissions")
    for r in rows:  # an inexact result under loss is a bug worth seeing on the figure
        if r.get("exact") is False and _num(r.get("loss_percent")) is not None:
            ax_g.annotate("not exact", (r["loss_percent"], 1000 * (_num(r.get("goodput_gbps")) or 0.0)), color="red")
    return fig


def _sweep_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    sweep = data.get("sweep")
    if isinstance(sweep, dict):
        return _rows(sweep, "rows") or _rows(sweep, "points")
    return _rows(data, "sweep")


@figure("fabric", "sweep")
def fabric_sweep(data: dict[str, Any]) -> Figure | None:
    """Time and goodput vs size (one line per mode, at the largest worker count); time and bytes per host link vs
    workers (at the largest size), the latter against the ring's 2(N-1)/N."""
    rows = [r for r in _sweep_rows(data) if isinstance(r.get("mode"), str)]
    workers = [w for r in rows if (w := _num(r.get("workers"))) is not None]
    sizes = [b for r in rows if (b := _num(r.get("bytes"))) is not None]
    if not workers or not sizes:
        return None
    most, biggest = max(workers), max(sizes)
    fig = Figure(figsize=(11, 8), layout="constrained")
    ax_t, ax_g, ax_w, ax_b = (fig.add_subplot(2, 2, i + 1) for i in range(4))
    for i, mode in enumerate(sorted({r["mode"] for r in rows})):
        style = {"marker": "o", "label": mode, "color": f"C{i}"}
        at_most = [r for r in rows if r["mode"] == mode and r.get("workers") == most]
        at_biggest = [r for r in rows if r["mode"] == mode and r.get("bytes") == biggest]
        xs, ys = _points(at_most, "bytes", "median_seconds")
        ax_t.plot(xs, [y * 1000 for y in ys], **style)
        ax_g.plot(*_points(at_most, "bytes", "goodput_gbps"), **style)
        wx, wy = _points(at_biggest, "workers", "median_seconds")
        ax_w.plot(wx, [y * 1000 for y in wy], **style)
        bx, by = _points(at_biggest, "workers", "bytes_per_host_link")
        ax_b.plot(bx, [y / biggest for y in by], **style)
        bad = [r for r in at_most if r.get("correct") is False and _num(r.get("median_seconds")) is not None
               and _num(r.get("bytes")) is not None]
        if bad:
            ax_t.scatter([r["bytes"] for r in bad], [1000 * r["median_seconds"] for r in bad], marker="x", s=80,
                         color="red", zorder=3)
    counts = sorted(set(workers))
    # Host links carry traffic both ways: a ring rank sends 2(N-1)/N of the tensor and receives as much.
    ax_b.plot(counts, [2 * 2 * (n - 1) / n for n in counts], color="black", linestyle=":",
              label="ring theory 2 x 2(N-1)/N (both ways)")
    for ax in (ax_t, ax_g):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("tensor bytes")
    for ax in (ax_w, ax_b):
        ax.set_xlabel("workers")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_t.set_yscale("log")
    ax_t.set_ylabel("median time (ms)")
    ax_t.set_title(f"all-reduce time, {most:g} workers (x: wrong result)")
    ax_g.set_ylabel("goodput (Gbit/s)")
    ax_g.set_title(f"goodput, {most:g} workers")
    ax_w.set_ylabel("median time (ms)")
    ax_w.set_title(f"time vs workers, {_bytes_label(biggest)}")
    ax_b.set_ylabel("bytes per host link / tensor bytes")
    ax_b.set_title(f"traffic per host link, {_bytes_label(biggest)}")
    for ax in (ax_t, ax_g, ax_w, ax_b):
        if ax.has_data():
            ax.legend(fontsize="small")
    return fig


@figure("fabric", "calibration")
def fabric_calibration(data: dict[str, Any]) -> Figure | None:
    """The fabric model's predictions against the emulated measurements, with the tolerance band."""
    cal: dict[str, Any] = data["calibration"] if isinstance(data.get("calibration"), dict) else {}
    rows = [r for r in _rows(cal, "points") or _rows(data, "calibration")
            if _num(r.get("measured_s")) and _num(r.get("predicted_s"))]
    if not rows:
        return None
    tol = _num(cal.get("tolerance")) or 0.25
    fig, (ax,) = _new(1, 6.0, 5.0)
    low = min(min(r["measured_s"], r["predicted_s"]) for r in rows) * 1000 / 1.5
    high = max(max(r["measured_s"], r["predicted_s"]) for r in rows) * 1000 * 1.5
    line = [low, high]
    ax.plot(line, line, color="black", linewidth=1, label="prediction = measurement")
    ax.fill_between(line, [v * (1 - tol) for v in line], [v * (1 + tol) for v in line], color="grey", alpha=0.2,
                    label=f"±{tol:.0%}")
    for i, algorithm in enumerate(sorted({str(r.get("algorithm")) for r in rows})):
        color = f"C{i}"
        for fitted in (True, False):
            pts = [r for r in rows if str(r.get("algorithm")) == algorithm and bool(r.get("fitted_on")) == fitted]
            if pts:
                ax.scatter([1000 * r["measured_s"] for r in pts], [1000 * r["predicted_s"] for r in pts],
                           marker="s" if fitted else "o", facecolors="none" if fitted else color, edgecolors=color,
                           s=60 if fitted else 30, label=f"{algorithm}, {'fit point' if fitted else 'held out'}")
    for r in rows:
        if _num(r.get("workers")) is not None:
            ax.annotate(f"{r['workers']:g}w", (1000 * r["measured_s"], 1000 * r["predicted_s"]), fontsize=7,
                        textcoords="offset points", xytext=(4, 2))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured (ms)")
    ax.set_ylabel("predicted (ms)")
    ax.set_title("fabric model calibration")
    ax.legend(fontsize="small")
    return fig


_RECOVERY_KEYS = ("recovery", "link_down_recovery", "recovery_link_down")


@figure("fabric", "recovery")
def fabric_recovery(data: dict[str, Any]) -> Figure | None:
    """Step times of the runs with a fault, with the controller's recovery time."""
    runs = [(k, data[k]) for k in _RECOVERY_KEYS if isinstance(data.get(k), dict)
            and any(_num(s) is not None for s in data[k].get("step_seconds") or [])]
    if not runs:
        return None
    fig, (ax,) = _new(1, 6.0)
    for key, run in runs:
        steps = [s for s in run["step_seconds"] if _num(s) is not None]
        rec = [f"{ms:g} ms" for ms in run.get("recovery_ms") or [] if _num(ms) is not None]
        label = f"{run.get('fault', key)}; recovery {', '.join(rec) or 'n/a'}"
        ax.plot(range(1, len(steps) + 1), steps, marker="o", label=label)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("step")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("step time (s)")
    ax.set_title("all-reduce steps around a fault")
    ax.legend(fontsize="small")
    return fig


# -- quantization ---------------------------------------------------------------------------------------------------

_STYLES: tuple[LineStyleType, ...] = ("-", "--", ":", "-.")


@figure("quantization")
def quantization(data: dict[str, Any]) -> Figure | None:
    """Relative RMS error and error/bound vs workers per format and distribution, and wire bytes per element."""
    rows = [r for r in _rows(data, "rows") if isinstance(r.get("format"), str)]
    if not rows:
        return None
    fig, (ax_e, ax_b, ax_w) = _new(3, 5.0)
    formats = list(dict.fromkeys(r["format"] for r in rows))
    dists = list(dict.fromkeys(str(r.get("distribution")) for r in rows))
    colors = {f: f"C{i}" for i, f in enumerate([*formats, "float32"])}
    reference = _rows(data, "float32_reference")
    for d, dist in enumerate(dists):
        style = _STYLES[d % len(_STYLES)]
        for fmt in [*formats, "float32"]:
            source = reference if fmt == "float32" else rows
            mine = [r for r in source if r.get("format") == fmt and str(r.get("distribution")) == dist]
            xs, ys = _points(mine, "workers", "rel_rms_error")
            nonzero = [(x, y) for x, y in zip(xs, ys, strict=True) if y > 0]  # log axis: exact results drop out
            if nonzero:
                ax_e.plot(*zip(*nonzero, strict=True), marker="o", linestyle=style, color=colors[fmt])
            bx, by = _points(mine, "workers", "max_error_over_bound")
            if fmt != "float32" and bx:
                ax_b.plot(bx, by, marker="o", linestyle=style, color=colors[fmt])
    # one legend for colours (formats), one for line styles (distributions), instead of every combination
    ax_e.legend(handles=[Line2D([], [], color=colors[f], marker="o", label=f) for f in [*formats, "float32"]],
                fontsize="small", title="format", loc="best")
    ax_b.legend(handles=[Line2D([], [], color="black", linestyle=_STYLES[d % len(_STYLES)], label=dist)
                         for d, dist in enumerate(dists)] + [Line2D([], [], color="red", label="bound")],
                fontsize="small", title="tensor", loc="best")
    ax_e.set_yscale("log")
    ax_e.set_xlabel("workers")
    ax_e.set_ylabel("RMS error / RMS of the sum")
    ax_e.set_title("all-reduce error (exact results not drawn)")
    ax_b.axhline(1.0, color="red", linewidth=1)
    ax_b.set_xlabel("workers")
    ax_b.set_ylabel("max |error| / documented bound")
    ax_b.set_title("error against the bound")
    per_fmt: dict[str, float] = {}
    for f in formats:
        wire = _num(next((r.get("data_bytes_per_element") for r in rows if r["format"] == f), None))
        if wire is not None:
            per_fmt[f] = wire
    if per_fmt:
        ax_w.bar(list(per_fmt), list(per_fmt.values()), color=[colors[f] for f in per_fmt])
        ax_w.axhline(4.0, color="grey", linestyle=":", label="float32 payload only")
        ax_w.legend(fontsize="small")
    ax_w.set_ylabel("bytes per element per direction (frames)")
    ax_w.set_title("wire bytes per element")
    return fig
