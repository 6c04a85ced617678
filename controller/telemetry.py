"""Counters per job and switch, read over P4Runtime and exported as JSON or Prometheus text.

Each switch's counter arrays are read once (a wildcard index reads the whole array) and split by the job
indices the controller granted, so the cost is one Read per counter per switch however many jobs there are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from p4.v1 import p4runtime_pb2

from controller.client import SwitchClient
from controller.fabric import Fabric
from controller.program import AGG_DROPS, AGG_PACKETS, DROP_REASONS, DROP_ROWS_PER_JOB, FWD_DROPS, PFC_RX
from controller.state import JobRecord


@dataclass(frozen=True)
class Sample:
    metric: str
    labels: tuple[tuple[str, str], ...]
    value: int
    help: str = ""

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["labels"] = dict(self.labels)
        return d


HELP = {
    "p4ina_agg_packets_total": "aggregation packets that passed admission, per job and switch",
    "p4ina_agg_bytes_total": "bytes of aggregation packets that passed admission, per job and switch",
    "p4ina_agg_drops_total": "aggregation packets dropped, per job, switch and reason",
    "p4ina_unknown_job_drops_total": "aggregation packets for jobs this switch does not serve, per reason",
    "p4ina_fwd_drops_total": "forwarded packets dropped (no route, TTL, bad checksum), per switch and port",
    "p4ina_pfc_rx_total": "PFC pause frames received, per switch and port",
    "p4ina_switch_up": "1 when the controller reached the switch during this collection",
}


def _read_array(c: SwitchClient, name: str) -> dict[int, p4runtime_pb2.CounterData]:
    try:
        return {e.index.index: e.data for e in c.read_counter(name)}
    except Exception:  # a program without this counter, or a target that cannot read it: no samples
        return {}


def collect(fabric: Fabric, jobs: Mapping[int, JobRecord], switches: Iterable[str] | None = None,
            unknown_job_row: int = 16) -> list[Sample]:
    """All samples for the given switches (default: every switch of the topology)."""
    names = sorted(switches if switches is not None else fabric.topo.switches)

    def read(c: SwitchClient) -> dict[str, dict[int, p4runtime_pb2.CounterData]]:
        return {n: _read_array(c, n) for n in (AGG_PACKETS, AGG_DROPS, FWD_DROPS, PFC_RX)}

    out = fabric.run(read, names)
    samples: list[Sample] = []
    for sw in names:
        samples.append(Sample("p4ina_switch_up", (("switch", sw),), int(sw in out.results)))
    for sw, arrays in sorted(out.results.items()):
        for job_id, rec in sorted(jobs.items()):
            grant = rec.grants.get(sw)
            if grant is None:
                continue
            labels = (("job", str(job_id)), ("switch", sw))
            data = arrays[AGG_PACKETS].get(grant.job_idx)
            if data is not None:
                samples.append(Sample("p4ina_agg_packets_total", labels, data.packet_count))
                samples.append(Sample("p4ina_agg_bytes_total", labels, data.byte_count))
            for reason, rname in enumerate(DROP_REASONS):
                d = arrays[AGG_DROPS].get(grant.job_idx * DROP_ROWS_PER_JOB + reason)
                if d is not None:
                    samples.append(Sample("p4ina_agg_drops_total", (*labels, ("reason", rname)), d.packet_count))
        for reason, rname in enumerate(DROP_REASONS):
            d = arrays[AGG_DROPS].get(unknown_job_row * DROP_ROWS_PER_JOB + reason)
            if d is not None and d.packet_count:
                samples.append(Sample("p4ina_unknown_job_drops_total", (("switch", sw), ("reason", rname)),
                                      d.packet_count))
        for metric, counter in (("p4ina_fwd_drops_total", FWD_DROPS), ("p4ina_pfc_rx_total", PFC_RX)):
            for port, d in sorted(arrays[counter].items()):
                if d.packet_count:
                    samples.append(Sample(metric, (("switch", sw), ("port", str(port))), d.packet_count))
    return [Sample(s.metric, s.labels, s.value, HELP.get(s.metric, "")) for s in samples]


def to_prometheus(samples: Iterable[Sample]) -> str:
    """Prometheus text exposition format 0.0.4: HELP/TYPE once per metric, then its samples."""
    lines: list[str] = []
    seen: set[str] = set()
    for s in sorted(samples, key=lambda s: s.metric):
        if s.metric not in seen:
            seen.add(s.metric)
            kind = "gauge" if s.metric == "p4ina_switch_up" else "counter"
            lines.append(f"# HELP {s.metric} {s.help or s.metric}")
            lines.append(f"# TYPE {s.metric} {kind}")
        labels = ",".join(f'{k}="{_escape(v)}"' for k, v in s.labels)
        lines.append(f"{s.metric}{{{labels}}} {s.value}" if labels else f"{s.metric} {s.value}")
    return "\n".join(lines) + ("\n" if lines else "")


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def job_totals(samples: Iterable[Sample]) -> dict[str, dict[str, int]]:
    """Per job: aggregated packets and drops summed over switches (for `ctl counters` tables)."""
    totals: dict[str, dict[str, int]] = {}
    for s in samples:
        labels = dict(s.labels)
        if "job" not in labels:
            continue
        row = totals.setdefault(labels["job"], {})
        key = {"p4ina_agg_packets_total": "packets", "p4ina_agg_bytes_total": "bytes"}.get(s.metric)
        if key is None and s.metric == "p4ina_agg_drops_total":
            key = "drops_" + labels["reason"].lower()
        if key is not None:
            row[key] = row.get(key, 0) + s.value
    return totals


class _MetricsHandler(BaseHTTPRequestHandler):
    collect_text: Callable[[], str]

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] != "/metrics":
            self.send_error(404, "only /metrics is served")
            return
        try:
            body = self.collect_text().encode()
        except Exception as exc:  # a scrape must get an answer, not a dropped connection
            self.send_error(503, f"collection failed: {exc}".splitlines()[0])
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # scrapes are not worth a line each
        return


def metrics_server(host: str, port: int, collect_text: Callable[[], str]) -> ThreadingHTTPServer:
    """An HTTP server answering `GET /metrics` with a fresh collection (call `serve_forever()` or use a thread)."""
    handler = type("MetricsHandler", (_MetricsHandler,), {"collect_text": staticmethod(collect_text)})
    return ThreadingHTTPServer((host, port), handler)
