#!/usr/bin/env bash
# Run one p4lang/tutorials exercise's own PTF suite against the embedded p4ina switch, the way the exercise's
# runptf.sh runs it against BMv2: compile solution/EXERCISE.p4 (p4ina-p4c-bm2-ss for p4c), start
# p4ina-simple-switch-grpc --no-p4 on ports 0..7 = veth0,veth2,...,veth14, and run `ptf` on the peers
# veth1,veth3,...,veth15 with the same --test-params. Everything network runs inside a network namespace this
# script creates and deletes (so the veths and port 9559 never touch the host), and only the switch it started
# is stopped, by PID.
#
#   scripts/run_tutorial_ptf.sh TUTORIALS_DIR EXERCISE      e.g. ~/tutorials basic  |  ~/tutorials basic_tunnel
#
# Environment:
#   PTF        the ptf command (default: `ptf` on PATH). Its Python needs scapy, grpcio, protobuf and p4runtime:
#              `.venv/bin/pip install ptf` gives .venv/bin/ptf, or PTF=".venv/bin/python /path/to/bin/ptf".
#   P4INA_BIN  where p4ina-p4c-bm2-ss and p4ina-simple-switch-grpc are (default: this checkout's .venv/bin)
#   NETNS      the namespace name (default: p4ina-ptf-<pid>; must not exist yet)
# Needs root (ip netns). Exit status: ptf's (0 when every test passed).
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 TUTORIALS_DIR EXERCISE" >&2
    exit 2
fi
TUTORIALS=$(realpath "$1")
EXERCISE=$2
EXDIR="$TUTORIALS/exercises/$EXERCISE"
REPO=$(cd "$(dirname "$0")/.." && pwd)
P4INA_BIN=${P4INA_BIN:-$REPO/.venv/bin}
PTF=${PTF:-ptf}
NETNS=${NETNS:-p4ina-ptf-$$}
PORTS=8

for f in "$EXDIR/solution/$EXERCISE.p4" "$P4INA_BIN/p4ina-p4c-bm2-ss" "$P4INA_BIN/p4ina-simple-switch-grpc"; do
    [[ -e "$f" ]] || { echo "$0: missing $f" >&2; exit 2; }
done
[[ -d "$EXDIR/ptf" ]] || { echo "$0: no ptf/ directory in $EXDIR" >&2; exit 2; }
if ip netns list | grep -qw "$NETNS"; then
    echo "$0: namespace $NETNS already exists" >&2
    exit 2
fi

SWITCH_PID=""
# shellcheck disable=SC2317  # called through the trap
cleanup() {
    if [[ -n "$SWITCH_PID" ]] && kill -0 "$SWITCH_PID" 2>/dev/null; then
        kill "$SWITCH_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SWITCH_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SWITCH_PID" 2>/dev/null || true
    fi
    # Deleting the namespace deletes the veths inside it.
    ip netns del "$NETNS" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

cd "$EXDIR"
mkdir -p build logs
# runptf.sh: p4c --target bmv2 --arch v1model --p4runtime-files build/X.p4info.txtpb -o build solution/X.p4
"$P4INA_BIN/p4ina-p4c-bm2-ss" --target bmv2 --arch v1model \
    --p4runtime-files "build/$EXERCISE.p4info.txtpb" -o build "solution/$EXERCISE.p4"

# The tutorials' utils/veth_setup.sh: 8 pairs vethN <-> vethN+1, up, IPv6 off (no stray router solicitations
# for verify_no_other_packets to see), MTU 9500.
ip netns add "$NETNS"
ip -n "$NETNS" link set lo up
SWITCH_IFS=()
PTF_IFS=()
for ((i = 0; i < PORTS; i++)); do
    a=veth$((2 * i)) b=veth$((2 * i + 1))
    ip -n "$NETNS" link add "$a" type veth peer name "$b"
    for v in "$a" "$b"; do
        ip netns exec "$NETNS" sysctl -qw "net.ipv6.conf.$v.disable_ipv6=1"
        ip -n "$NETNS" link set "$v" mtu 9500 up
    done
    SWITCH_IFS+=(-i "$i@$a")
    PTF_IFS+=(-i "$i@$b")
done

# runptf.sh's switch flags (--dump-packet-data is accepted with a warning); the address is pinned to the
# namespace's loopback rather than simple_switch_grpc's default 0.0.0.0:9559.
ip netns exec "$NETNS" "$P4INA_BIN/p4ina-simple-switch-grpc" --log-file ss-log --log-flush \
    --dump-packet-data 10000 "${SWITCH_IFS[@]}" --no-p4 -- --grpc-server-addr 127.0.0.1:9559 &
SWITCH_PID=$!

# runptf.sh sleeps 2 s; wait for the P4Runtime port instead (the first start compiles nothing but imports a lot).
for _ in $(seq 300); do
    if ip netns exec "$NETNS" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9559' 2>/dev/null; then break; fi
    kill -0 "$SWITCH_PID" 2>/dev/null || { echo "$0: the switch exited" >&2; exit 1; }
    sleep 0.1
done

set +e
# shellcheck disable=SC2086  # PTF may be "python /path/ptf"
ip netns exec "$NETNS" $PTF "${PTF_IFS[@]}" \
    --test-params="grpcaddr='localhost:9559';p4info='build/$EXERCISE.p4info.txtpb';config='build/$EXERCISE.json'" \
    --test-dir ptf
status=$?
set -e
exit "$status"
