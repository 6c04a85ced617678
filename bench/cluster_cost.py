"""What Mininet's cluster mode costs: bring a fabric up and down (`Fabric.start`/`stop`) on this machine and through
`--cluster SERVER` (every node placed on SERVER over ssh), and time a P4Runtime round trip to a switch (direct vs
through the ssh port forward). JSON on stdout. Needs root and an ssh server reachable through `--ssh-config`
(tests/integration/test_fabric_cluster.py shows how to start a throwaway one).

    .venv/bin/python -m bench.cluster_cost --server p4ina-remote --ssh-config /tmp/ssh/config
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _capabilities_seconds(address: str, n: int) -> float:
    """Median seconds of a P4Runtime Capabilities call to `address` (the controller's first request)."""
    import grpc
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

    channel = grpc.insecure_channel(address)
    stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
    stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=10)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=10)
        times.append(time.perf_counter() - t0)
    channel.close()
    return statistics.median(times)


def measure(topo_spec: str, cluster: Any, repeats: int, rpcs: int) -> dict[str, Any]:
    from p4fabric.fabric import Fabric
    from p4fabric.topos import parse_topo_spec

    starts, stops, rpc = [], [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            fabric = Fabric(parse_topo_spec(topo_spec), out_dir=Path(tmp), cluster=cluster)
            t0 = time.perf_counter()
            fabric.start()
            starts.append(time.perf_counter() - t0)
            try:
                rpc.append(_capabilities_seconds(fabric.switches[0].grpc_address, rpcs))
            finally:
                t0 = time.perf_counter()
                fabric.stop()
                stops.append(time.perf_counter() - t0)
    return {"start_s": [round(s, 3) for s in starts], "stop_s": [round(s, 3) for s in stops],
            "start_median_s": round(statistics.median(starts), 3), "stop_median_s": round(statistics.median(stops), 3),
            "capabilities_rpc_median_ms": round(statistics.median(rpc) * 1000, 3)}


def main(argv: list[str] | None = None) -> int:
    from p4fabric.cluster import ClusterSpec

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="cluster server (an ssh config alias or address)")
    parser.add_argument("--ssh-config", type=Path, help="ssh client config (ssh -F)")
    parser.add_argument("--topo", default="leafspine,2,1,1")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--rpcs", type=int, default=50)
    args = parser.parse_args(argv)
    cluster = ClusterSpec.parse(args.server, args.ssh_config)
    result = {"topo": args.topo, "server": args.server,
              "local": measure(args.topo, None, args.repeats, args.rpcs),
              "cluster": measure(args.topo, cluster, args.repeats, args.rpcs)}
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
