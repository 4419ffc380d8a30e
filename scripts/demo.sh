#!/usr/bin/env bash
# The README's main job on an embedded default: an online migration, end to end on one machine.
#   1. start Debian's ZooKeeper 3.8 on a free loopback port in a temporary directory — as a local
#      process (default), or with --containers in a container (docker-compose.test.yml's `zk`,
#      host network, loopback only; scripts/install.sh builds the image and starts the engine);
#   2. write a healthy sample ZK-mode Kafka cluster into it (chroot /kafka) and keep the
#      generator's session open in the background, so the ephemeral broker znodes stay alive;
#   3. `zk2kraft plan` (the pre-flight; exit 0 = nothing blocks a migration; plan.html);
#   4. start a writer that changes the cluster as ZooKeeper's controller does (ISR and leader
#      changes, topics created and deleted, configs, quotas, SCRAM users, ACLs, brokers joining
#      and leaving; each write guarded by /controller_epoch: tests/support/churn.py);
#   5. `zk2kraft migrate --cutover now` into three temporary voter directories (controller ids
#      3000-3002): the pre-copy, the mirror of the writer's changes, the fence (the writer's next
#      write fails), the drain, /migration, and the handoff; the window's parts printed as a
#      stacked bar and written to migrate.html. No Kafka runs here: --on-cutover, which starts the
#      KRaft controllers in production, runs a helper that claims /controller as Kafka's KRaft
#      controller does (tests/support/migration_cluster.py);
#   6. `zk2kraft verify` (exit 0 = the log and ZooKeeper agree, every writer change included),
#      and the first records of `zk2kraft inspect --json`;
#   7. `zk2kraft plan --fleet` over three clusters (a ready sample, a sample with every blocker,
#      and a ZooKeeper that does not answer) on Spark local[*]: the fleet's table and fleet.html
#      (exit 3, expected: one cluster is unreachable).
# With --standin (needs Kafka's jars, tests/kafka/jars): real Kafka 3.9.1 controllers 3001 and
# 3002 in migration mode instead of local voter dirs; zk2kraft leads them as stand-in 3000
# (plan prints the operator's sequence), replicates the pre-copy and the mirror to their disks,
# resigns at the cutover, and one of them claims /controller (its log gives the window's
# reconcile and broker_rpcs parts); after the controllers stop, `verify` checks each voter's copy.
# The sample's brokers exist only in ZooKeeper, so the cutover does not wait for them. It takes
# minutes, not seconds: two JVMs start. Its verify can find a SCRAM credential missing from
# ZooKeeper: Kafka 3.9.1's own takeover loses it when the writer created and removed another
# user with that mechanism (docs/design/online-run.md, "Kafka 3.9.1 can lose a SCRAM credential").
# The demo exits with the first failing step's code. The HTML reports stay in a directory it
# prints (zk2kraft-demo-report.* under $TMPDIR or /tmp); everything else is removed and every
# process it started stopped on exit (trap EXIT). Knobs (environment):
#   DEMO_TOPICS (20), DEMO_PARTITIONS (6), DEMO_BROKERS (3), DEMO_PRESET (clean|everything),
#   DEMO_WRITER_RATE (changes/s, 100), ZK2KRAFT_DEMO_KEEP=1 keeps the temporary directory (logs,
#   JSON reports, voter dirs).
set -euo pipefail
cd "$(dirname "$0")/.."

zk_mode=process
transport=voters
for arg in "$@"; do
  case "$arg" in
    --containers) zk_mode=containers ;;
    --standin) transport=standin ;;
    *) echo "usage: scripts/demo.sh [--containers] [--standin]" >&2; exit 2 ;;
  esac
done

if [ -z "${VIRTUAL_ENV:-}" ] && [ -x .venv/bin/python ]; then
  export PATH="$PWD/.venv/bin:$PATH"  # scripts/install.sh's venv (externally managed Python)
fi
ZK_JAR=/usr/share/java/zookeeper.jar
if [ "$zk_mode" = process ] && [ ! -f "$ZK_JAR" ]; then
  echo "demo: $ZK_JAR not found; run scripts/install.sh first" >&2
  exit 3
fi
compose=(docker-compose)
command -v docker-compose >/dev/null || compose=(docker compose)
compose+=(-f docker-compose.test.yml -p "zk2kraftdemo$$")
if [ "$zk_mode" = containers ]; then
  if ! command -v docker >/dev/null || ! timeout 15 docker info >/dev/null 2>&1; then
    echo "demo: --containers: no Docker engine answers; run scripts/install.sh (it starts one)" >&2
    exit 3
  fi
  if ! docker image inspect zk2kraft/zookeeper:3.8 >/dev/null 2>&1; then
    echo "demo: --containers: image zk2kraft/zookeeper:3.8 missing; run scripts/install.sh" >&2
    exit 3
  fi
fi
command -v zk2kraft >/dev/null || { echo "demo: zk2kraft not installed; run scripts/install.sh" >&2; exit 3; }
if [ "$transport" = standin ] && ! ls tests/kafka/jars/*.jar >/dev/null 2>&1; then
  echo "demo: --standin: Kafka's jars are not in tests/kafka/jars; run scripts/install.sh" >&2
  exit 3
fi

work=$(mktemp -d -t zk2kraft-demo.XXXXXX)
reports=$(mktemp -d -t zk2kraft-demo-report.XXXXXX)
zk_pid=""
zk_container=0
gen_pid=""
fleet_pids=()
writer_pid=""
controllers_pid=""
status=0
demo_t0=$(date +%s.%N)

stop_controllers() {
  if [ -n "$controllers_pid" ]; then
    kill "$controllers_pid" 2>/dev/null && wait "$controllers_pid" 2>/dev/null || true
    controllers_pid=""
  fi
}

cleanup() {
  local rc=$?
  [ -n "$writer_pid" ] && kill "$writer_pid" 2>/dev/null && wait "$writer_pid" 2>/dev/null || true
  stop_controllers
  [ -n "$gen_pid" ] && kill "$gen_pid" 2>/dev/null && wait "$gen_pid" 2>/dev/null || true
  for pid in "${fleet_pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  [ -n "$zk_pid" ] && kill "$zk_pid" 2>/dev/null && wait "$zk_pid" 2>/dev/null || true
  if [ "$zk_container" = 1 ]; then
    "${compose[@]}" down -v -t 5 >/dev/null 2>&1 || true
  fi
  if [ "${ZK2KRAFT_DEMO_KEEP:-0}" = "1" ] || [ "$rc" -ne 0 ]; then
    echo "demo: files kept in $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

section() { printf '\n== %s\n' "$*"; }
since() {  # seconds since $1 (date +%s.%N), one decimal
  python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' \
    "$1" "$(date +%s.%N)"
}

# -- 1. ZooKeeper --------------------------------------------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
t0=$(date +%s.%N)
if [ "$zk_mode" = containers ]; then
  section "starting ZooKeeper in a container on 127.0.0.1:$port (docker-compose.test.yml: zk)"
  zk_container=1
  ZK_PORT=$port "${compose[@]}" up -d zk 2>&1 | sed 's/^/  /'
else
  mkdir -p "$work/zk/data"
  cat >"$work/zk/zoo.cfg" <<EOF
tickTime=500
initLimit=20
syncLimit=10
dataDir=$work/zk/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
4lw.commands.whitelist=*
admin.enableServer=false
EOF
  cp_extra=""
  [ -f /usr/share/java/slf4j-simple.jar ] && cp_extra=":/usr/share/java/slf4j-simple.jar"
  section "starting ZooKeeper on 127.0.0.1:$port ($work/zk)"
  java -Xmx256m -XX:+UseSerialGC -Dzookeeper.admin.enableServer=false \
    -cp "$ZK_JAR$cp_extra" org.apache.zookeeper.server.quorum.QuorumPeerMain "$work/zk/zoo.cfg" \
    >"$work/zk/zookeeper.log" 2>&1 </dev/null &
  zk_pid=$!
fi

ruok() {
  python3 - "$port" <<'EOF'
import socket, sys
try:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1) as s:
        s.sendall(b"ruok")
        print(s.recv(16).decode())
except OSError:
    print("")
EOF
}
zk_alive() {
  if [ "$zk_mode" = containers ]; then
    [ "$(docker inspect -f '{{.State.Running}}' "$("${compose[@]}" ps -q zk)" 2>/dev/null)" = true ]
  else
    kill -0 "$zk_pid" 2>/dev/null
  fi
}
for _ in $(seq 1 150); do  # up to ~30 s
  [ "$(ruok)" = "imok" ] && break
  zk_alive || break
  sleep 0.2
done
if [ "$(ruok)" != "imok" ]; then
  echo "demo: ZooKeeper did not answer 'imok'; log tail:" >&2
  if [ "$zk_mode" = containers ]; then
    "${compose[@]}" logs --tail 30 zk >&2 || true
  else
    tail -n 30 "$work/zk/zookeeper.log" >&2
  fi
  exit 3
fi
echo "ZooKeeper ($zk_mode) is up (ruok -> imok), $(since "$t0") s after it was started"

# -- 2. sample cluster ---------------------------------------------------------------------------
connect="127.0.0.1:$port/kafka"
section "generating a ${DEMO_PRESET:-clean} sample Kafka cluster in $connect"
python3 -m samples --zookeeper "$connect" \
  --topics "${DEMO_TOPICS:-20}" --partitions "${DEMO_PARTITIONS:-6}" \
  --brokers "${DEMO_BROKERS:-3}" --preset "${DEMO_PRESET:-clean}" \
  --hold --ready-file "$work/sample.ready" >"$work/sample.out" 2>&1 &
gen_pid=$!
for _ in $(seq 1 300); do  # up to ~60 s
  [ -s "$work/sample.ready" ] && break
  kill -0 "$gen_pid" 2>/dev/null || break
  sleep 0.2
done
if [ ! -s "$work/sample.ready" ]; then
  echo "demo: the sample generator failed:" >&2
  cat "$work/sample.out" >&2
  exit 1
fi
cat "$work/sample.out"

run_step() {  # run a zk2kraft step, print its exit code and time, stop the demo on failure
  local step_t0
  step_t0=$(date +%s.%N)
  set +e
  zk2kraft "$@"
  status=$?
  set -e
  echo "zk2kraft $1 exit code: $status ($(since "$step_t0") s)"
  [ "$status" -eq 0 ] || exit "$status"
}

# -- 2b. with --standin: real controllers ------------------------------------------------------
transport_flags=()
if [ "$transport" = standin ]; then
  section "starting Kafka 3.9.1 controllers 3001 and 3002 in migration mode, for zk2kraft's stand-in 3000 (tests/support/standin.py)"
  python3 -m tests.support.standin --zookeeper "$connect" --root "$work/controllers" \
    --ready-file "$work/controllers.ready" >"$work/controllers.out" 2>&1 &
  controllers_pid=$!
  for _ in $(seq 1 900); do  # up to ~180 s: two JVMs on a busy machine
    [ -s "$work/controllers.ready" ] && break
    kill -0 "$controllers_pid" 2>/dev/null || break
    sleep 0.2
  done
  if [ ! -s "$work/controllers.ready" ]; then
    echo "demo: the controllers did not start:" >&2
    tail -n 40 "$work/controllers.out" >&2
    exit 3
  fi
  # sets port_3000, port_3001, port_3002, log_3001, log_3002
  eval "$(python3 -c 'import json, shlex, sys
doc = json.load(open(sys.argv[1]))
for n, port in doc["ports"].items():
    print(f"port_{n}={int(port)}")
for n, log in doc["logs"].items():
    print(f"log_{n}={shlex.quote(log)}")' "$work/controllers.ready")"
  quorum="3000@127.0.0.1:$port_3000,3001@127.0.0.1:$port_3001,3002@127.0.0.1:$port_3002"
  echo "controllers 3001 (127.0.0.1:$port_3001) and 3002 (127.0.0.1:$port_3002) are up"
  transport_flags=(--standin "3000@127.0.0.1:$port_3000=$work/standin"
                   --controller "3001@127.0.0.1:$port_3001" --controller "3002@127.0.0.1:$port_3002")
fi

# -- 3. plan -------------------------------------------------------------------------------------
section "zk2kraft plan --zookeeper $connect ${transport_flags[*]}"
run_step plan --zookeeper "$connect" "${transport_flags[@]}" --json "$work/plan.json" \
  --html "$reports/plan.html"

# -- 4. a writer, as ZooKeeper's controller ------------------------------------------------------
rate=${DEMO_WRITER_RATE:-100}
section "a writer changes the cluster as ZooKeeper's controller does ($rate changes/s, each guarded by /controller_epoch)"
python3 -m tests.support.churn --zookeeper "$connect" --rate "$rate" \
  --ready-file "$work/writer.ready" >"$work/writer.out" 2>"$work/writer.err" &
writer_pid=$!
for _ in $(seq 1 300); do  # up to ~60 s
  [ -s "$work/writer.ready" ] && break
  kill -0 "$writer_pid" 2>/dev/null || break
  sleep 0.2
done
if [ ! -s "$work/writer.ready" ]; then
  echo "demo: the writer did not start:" >&2
  cat "$work/writer.out" "$work/writer.err" >&2
  exit 1
fi
echo "writer running: $(cat "$work/writer.ready") changes made so far"

# -- 5. the online migration -------------------------------------------------------------------
if [ "$transport" = standin ]; then
  # The sample's brokers exist only in ZooKeeper: nothing will register with the stand-in, so the
  # cutover does not wait for them (--broker-wait 0); real brokers in migration mode would.
  section "zk2kraft migrate --cutover now --standin 3000 (the controllers replicate its log; at the cutover it resigns and one of them leads)"
  run_step migrate --zookeeper "$connect" --cutover now "${transport_flags[@]}" --broker-wait 0 \
    --journal "$work/journal" --controller-log "$log_3001" --controller-log "$log_3002" \
    --json "$work/migrate.json" --html "$reports/migrate.html"
else
  voters=(--voter "3000=$work/voter-3000" --voter "3001=$work/voter-3001" --voter "3002=$work/voter-3002")
  # In production --on-cutover starts the KRaft controllers; here a helper claims /controller the
  # way Kafka's KRaft controller does on taking over (no Kafka runs in this mode).
  python3 -c 'import sys
from tests.support.migration_cluster import claim_on_cutover
print("#!/bin/sh\n# stands in for starting the KRaft controllers: claims /controller as one")
print("exec " + claim_on_cutover(sys.argv[1]))' "$connect" >"$work/start-controllers.sh"
  chmod 700 "$work/start-controllers.sh"
  section "zk2kraft migrate --cutover now (3 voters in $work; --on-cutover claims /controller as a KRaft controller would)"
  run_step migrate --zookeeper "$connect" "${voters[@]}" --cutover now \
    --on-cutover "$work/start-controllers.sh" --json "$work/migrate.json" \
    --html "$reports/migrate.html"
fi
for _ in $(seq 1 50); do  # the writer reports once its next write has failed the fence
  [ -s "$work/writer.out" ] && break
  sleep 0.1
done
cat "$work/writer.out" "$work/writer.err"

# -- 6. verify, inspect --------------------------------------------------------------------------
if [ "$transport" = standin ]; then
  # In production the controllers run on; here they stop so that their logs hold still.
  section "stopping the controllers; zk2kraft verify of each voter's copy of the log"
  stop_controllers
  for node in 3000 3001 3002; do
    dir="$work/standin"
    [ "$node" = 3000 ] || dir="$work/controllers/meta$node"
    echo "-- voter $node ($dir)"
    run_step verify --zookeeper "$connect" --voter "$node=$dir" --quorum-voters "$quorum" \
      --json "$work/verify-$node.json"
  done
  first_voter="$work/standin"
else
  section "zk2kraft verify (the log against ZooKeeper read afresh, the writer's changes included)"
  run_step verify --zookeeper "$connect" "${voters[@]}" --json "$work/verify.json"
  first_voter="$work/voter-3000"
fi
section "zk2kraft inspect $first_voter --json (first 3 records)"
zk2kraft inspect "$first_voter" --json | head -n 3 || true

# -- 7. a fleet's pre-flight: three clusters in one Spark job -------------------------------------
# Two more sample clusters in the same ZooKeeper (their generators hold the broker sessions), and
# one whose ZooKeeper does not answer: planned together on Spark local[*] (its JVM start takes
# tens of seconds). Exit 3 is expected: one cluster is unreachable (3 wins over 1, the blocked one).
fleet_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
for shape in ready blocked; do
  preset=clean
  [ "$shape" = blocked ] && preset=everything
  python3 -m samples --zookeeper "127.0.0.1:$port/fleet-$shape" --topics 4 \
    --partitions 2 --preset "$preset" --hold --ready-file "$work/fleet-$shape.ready" \
    >"$work/fleet-$shape.out" 2>&1 &
  fleet_pids+=($!)
done
for shape in ready blocked; do
  for _ in $(seq 1 300); do  # up to ~60 s
    [ -s "$work/fleet-$shape.ready" ] && break
    sleep 0.2
  done
  [ -s "$work/fleet-$shape.ready" ] || { cat "$work/fleet-$shape.out" >&2; exit 1; }
done
cat >"$work/fleet.txt" <<EOF
# NAME     CONNECT                         [FLAG ...]
ready      127.0.0.1:$port/fleet-ready
blocked    127.0.0.1:$port/fleet-blocked
gone       127.0.0.1:$fleet_port/kafka      --zk-timeout 3   # nothing listens there
EOF
section "zk2kraft plan --fleet (three clusters: ready, blocked, unreachable) on Spark local[*]"
cat "$work/fleet.txt"
fleet_t0=$(date +%s.%N)
set +e
zk2kraft plan --fleet "$work/fleet.txt" --json "$work/fleet.json" --html "$reports/fleet.html"
status=$?
set -e
echo "zk2kraft plan --fleet exit code: $status ($(since "$fleet_t0") s; 3 = a cluster unreachable)"
[ "$status" -eq 3 ] || exit 1

section "done in $(since "$demo_t0") s; stopping the writer, the generators and ZooKeeper"
echo "reports (self-contained HTML, mode 0600), kept after the demo:"
echo "  $reports/plan.html     the pre-flight"
echo "  $reports/migrate.html  the online migration: the window's parts as a stacked bar"
echo "  $reports/fleet.html    the fleet's pre-flight: readiness, blockers by kind"
exit 0
