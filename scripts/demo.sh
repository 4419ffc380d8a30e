#!/usr/bin/env bash
# The README's main job on an embedded default, end to end on one machine:
#   1. start Debian's ZooKeeper 3.8 on a free loopback port in a temporary directory — as a local
#      process (default), or with --containers in a container (docker-compose.test.yml's `zk`,
#      host network, loopback only; scripts/install.sh builds the image and starts the engine);
#   2. write a healthy sample ZK-mode Kafka cluster into it (chroot /kafka) and keep the
#      generator's session open in the background, so the ephemeral broker znodes stay alive;
#   3. run `zk2kraft plan` on it (the pre-flight; exit 0 = nothing blocks a migration);
#   4. `zk2kraft migrate --cutover none` into three temporary voter directories (controller ids
#      3000-3002), the same again (a no-op), `zk2kraft verify` (exit 0 = parity), and the first
#      records of `zk2kraft inspect --json`. The demo exits with the first failing step's code.
# Everything started here is stopped on exit (trap EXIT). Knobs (environment):
#   DEMO_TOPICS (20), DEMO_PARTITIONS (6), DEMO_BROKERS (3), DEMO_PRESET (clean|everything),
#   ZK2KRAFT_DEMO_KEEP=1 keeps the temporary directory (logs, plan.json, voter dirs).
set -euo pipefail
cd "$(dirname "$0")/.."

zk_mode=process
case "${1:-}" in
  "") ;;
  --containers) zk_mode=containers ;;
  *) echo "usage: scripts/demo.sh [--containers]" >&2; exit 2 ;;
esac

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

work=$(mktemp -d -t zk2kraft-demo.XXXXXX)
zk_pid=""
zk_container=0
gen_pid=""
status=0

cleanup() {
  local rc=$?
  [ -n "$gen_pid" ] && kill "$gen_pid" 2>/dev/null && wait "$gen_pid" 2>/dev/null || true
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
elapsed=$(python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' \
  "$t0" "$(date +%s.%N)")
echo "ZooKeeper ($zk_mode) is up (ruok -> imok), ${elapsed} s after it was started"

# -- 2. sample cluster ---------------------------------------------------------------------------
connect="127.0.0.1:$port/kafka"
section "generating a ${DEMO_PRESET:-clean} sample Kafka cluster in $connect"
python3 -m zkreader.sample --zookeeper "$connect" \
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

# -- 3. plan -------------------------------------------------------------------------------------
section "zk2kraft plan --zookeeper $connect"
set +e
zk2kraft plan --zookeeper "$connect" --json "$work/plan.json"
status=$?
set -e
echo "plan exit code: $status (0 ok, 1 blockers, 2 bad input, 3 unreachable)"

# -- 4. migrate, migrate again, verify, inspect ----------------------------------------------------
voters=(--voter "3000=$work/voter-3000" --voter "3001=$work/voter-3001" --voter "3002=$work/voter-3002")
run_step() {  # run a zk2kraft step, print its exit code, stop the demo on failure
  set +e
  zk2kraft "$@"
  status=$?
  set -e
  echo "$1 exit code: $status"
}
if [ "$status" -eq 0 ]; then
  section "zk2kraft migrate --cutover none (3 voters in $work)"
  run_step migrate --zookeeper "$connect" "${voters[@]}" --cutover none --json "$work/migrate.json"
fi
if [ "$status" -eq 0 ]; then
  section "zk2kraft migrate again (same ZooKeeper state: a no-op, byte-identical)"
  run_step migrate --zookeeper "$connect" "${voters[@]}" --cutover none \
    --spark-master in-process --json "$work/migrate-again.json"
fi
if [ "$status" -eq 0 ]; then
  section "zk2kraft verify"
  run_step verify --zookeeper "$connect" "${voters[@]}" --json "$work/verify.json"
fi
if [ "$status" -eq 0 ]; then
  section "zk2kraft inspect $work/voter-3000 --json (first 5 records)"
  zk2kraft inspect "$work/voter-3000" --json | head -n 5 || true
fi

section "done; stopping the generator and ZooKeeper"
exit "$status"
