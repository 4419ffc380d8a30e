#!/usr/bin/env bash
# The container path for the tests and the demo: a Docker engine, Compose, and three local images
# built without any image registry (none can be reached from these machines):
#
#   zk2kraft/base:bookworm   Debian bookworm + Debian's ZooKeeper + a JRE, made by debootstrap
#                            from the Debian mirror apt is already configured with, `docker import`ed
#   zk2kraft/zookeeper:3.8   FROM base, docker/zookeeper (config written from the environment)
#   zk2kraft/kafka:3.9.1     FROM base, docker/kafka + the Kafka 3.9.1 jars the oracle tests use
#
# Each image carries the sha256 of its inputs as the label org.zk2kraft.stamp; an image whose stamp
# matches is not rebuilt, so a second run costs seconds. Called by scripts/install.sh.
#
# The engine: when `docker info` gets no answer, dockerd (Debian's docker.io) is started with no
# bridge and no iptables rules (--bridge=none --iptables=false --ip-masq=false): containers use
# the host's network and listen on loopback only, and no private-range address is ever made.
# The pid of a dockerd started here is kept in $ZK2KRAFT_RUN_DIR/dockerd.pid; `--stop-engine`
# stops that one dockerd and nothing else (an engine found running is never touched).
#
# Usage: scripts/install-containers.sh                install + engine + images
#        scripts/install-containers.sh --engine-only  install + engine, no images
#        scripts/install-containers.sh --stop-engine  stop the dockerd this script started
# Environment: ZK2KRAFT_SKIP_CONTAINERS=1 makes scripts/install.sh not call this at all.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

RUN_DIR=${ZK2KRAFT_RUN_DIR:-/run/zk2kraft}
ENGINE_LOG=${ZK2KRAFT_ENGINE_LOG:-/var/log/zk2kraft-dockerd.log}
SUITE=bookworm
BASE_IMAGE=zk2kraft/base:$SUITE
ZK_IMAGE=zk2kraft/zookeeper:3.8
KAFKA_IMAGE=zk2kraft/kafka:3.9.1
BASE_PACKAGES=default-jre-headless,zookeeper
BASE_RECIPE=1  # bump when the way the base is made changes (forces a rebuild)

say() { echo "install-containers: $*"; }
die() { echo "install-containers: $*" >&2; exit 1; }

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

engine_answers() { timeout 15 docker info >/dev/null 2>&1; }

stop_engine() {
  local pidfile="$RUN_DIR/dockerd.pid" pid
  [ -f "$pidfile" ] || { say "no dockerd was started by this script; nothing to stop"; return 0; }
  pid=$(cat "$pidfile")
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != "dockerd" ]; then
    say "dockerd $pid (started here) is already gone"
    $SUDO rm -f "$pidfile"
    return 0
  fi
  say "stopping dockerd $pid (started by this script)"
  $SUDO kill -TERM "$pid"
  for _ in $(seq 1 150); do
    [ -d "/proc/$pid" ] || break
    sleep 0.2
  done
  [ -d "/proc/$pid" ] && die "dockerd $pid did not stop within 30 s (log: $ENGINE_LOG)"
  $SUDO rm -f "$pidfile"
}

if [ "${1:-}" = "--stop-engine" ]; then
  stop_engine
  exit 0
fi

# -- packages ------------------------------------------------------------------------------------
need_apt=()
command -v dockerd >/dev/null || need_apt+=(docker.io)
command -v docker-compose >/dev/null || need_apt+=(docker-compose)
command -v debootstrap >/dev/null || need_apt+=(debootstrap)
if [ ${#need_apt[@]} -gt 0 ]; then
  say "apt packages: ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${need_apt[@]}" >/dev/null
fi

# -- engine --------------------------------------------------------------------------------------
if engine_answers; then
  say "a Docker engine answers already; using it"
else
  $SUDO mkdir -p "$RUN_DIR"
  say "no Docker engine answers; starting dockerd without a bridge (log: $ENGINE_LOG)"
  # setsid: the engine outlives this script (the tests need it); its pid is kept for --stop-engine.
  $SUDO setsid dockerd --bridge=none --iptables=false --ip-masq=false \
    </dev/null >>"$ENGINE_LOG" 2>&1 &
  echo $! | $SUDO tee "$RUN_DIR/dockerd.pid" >/dev/null
  for _ in $(seq 1 60); do
    engine_answers && break
    [ -d "/proc/$(cat "$RUN_DIR/dockerd.pid")" ] || break
    sleep 0.5
  done
  engine_answers || { tail -n 30 "$ENGINE_LOG" >&2; die "dockerd did not answer within 30 s"; }
fi
# The CLI may be newer than the engine (here a 28.x client, a 20.10 engine): it negotiates the
# engine's API version by itself; say both so a log shows what ran.
say "docker client $(docker version -f '{{.Client.Version}}' 2>/dev/null)," \
  "engine $(docker version -f '{{.Server.Version}} (API {{.Server.APIVersion}})' 2>/dev/null)," \
  "$(docker-compose version --short 2>/dev/null | sed 's/^/compose /')"

[ "${1:-}" = "--engine-only" ] && exit 0

# -- images --------------------------------------------------------------------------------------
image_stamp() {
  docker image inspect -f '{{ index .Config.Labels "org.zk2kraft.stamp" }}' "$1" 2>/dev/null || true
}

# The Debian mirror apt already uses, from apt's own view of its configuration (one-line
# sources.list and deb822 .sources alike): the repository serving $SUITE's main component, or, on
# a host of another Debian release, any Debian archive apt uses (a mirror serves every suite).
apt_mirror() {
  local targets m
  targets=$(apt-get indextargets --format '$(REPO_URI) $(CODENAME) $(COMPONENT) $(ORIGIN)' \
              'Created-By: Packages' 2>/dev/null || true)
  if [ -z "$targets" ]; then  # no index lists yet (a freshly cleaned image): fetch them once
    $SUDO apt-get update -qq
    targets=$(apt-get indextargets --format '$(REPO_URI) $(CODENAME) $(COMPONENT) $(ORIGIN)' \
                'Created-By: Packages' 2>/dev/null || true)
  fi
  m=$(awk -v s="$SUITE" '$2 == s && $3 == "main" { print $1; exit }' <<<"$targets")
  [ -n "$m" ] || m=$(awk '$3 == "main" && $4 == "Debian" && $2 !~ /-security$/ { print $1; exit }' \
                     <<<"$targets")
  echo "$m"
}

build_base() {
  local mirror arch stamp rootfs t0
  mirror=$(apt_mirror)
  [ -n "$mirror" ] || die "apt has no source for Debian $SUITE main; the base image is built from it"
  arch=$(dpkg --print-architecture)
  stamp=$(printf '%s\n' "recipe=$BASE_RECIPE" "suite=$SUITE" "arch=$arch" "mirror=$mirror" \
            "variant=minbase" "include=$BASE_PACKAGES" | sha256sum | cut -d' ' -f1)
  if [ "$(image_stamp "$BASE_IMAGE")" = "$stamp" ]; then
    say "$BASE_IMAGE is up to date"
    return 0
  fi
  # apt's proxy, if it has one, is debootstrap's too.
  local http_proxy=""
  eval "$(apt-config shell http_proxy Acquire::http::Proxy)"
  [ -n "$http_proxy" ] && export http_proxy
  rootfs=$(mktemp -d "${TMPDIR:-/var/tmp}/zk2kraft-rootfs.XXXXXX")
  # Never delete through a mount left behind by a failed debootstrap (/proc, /sys, /dev binds).
  cleanup_rootfs() {
    findmnt -rn -o TARGET | grep -F "$rootfs/" | sort -r | xargs -r -n1 $SUDO umount -l || true
    $SUDO rm -rf --one-file-system "$rootfs"
  }
  trap cleanup_rootfs EXIT
  say "building $BASE_IMAGE: debootstrap $SUITE from $mirror (a minute or two, ~900 MB)"
  t0=$(date +%s)
  if ! $SUDO debootstrap --variant=minbase --include="$BASE_PACKAGES" "$SUITE" "$rootfs" \
       "$mirror" >"$rootfs.log" 2>&1; then
    tail -n 30 "$rootfs.log" >&2
    die "debootstrap failed (log: $rootfs.log)"
  fi
  rm -f "$rootfs.log"
  $SUDO rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  say "debootstrap took $(( $(date +%s) - t0 )) s; importing"
  $SUDO tar -C "$rootfs" -c . | docker import \
    --change "LABEL org.zk2kraft.stamp=$stamp" \
    --change "ENV LANG=C.UTF-8" \
    - "$BASE_IMAGE" >/dev/null
  cleanup_rootfs
  trap - EXIT
  say "$BASE_IMAGE built in $(( $(date +%s) - t0 )) s"
}

tree_sums() {  # sha256 of every file under $1 (or of $1 itself), symlinks followed
  if [ -d "$1" ]; then (cd "$1" && find -L . -type f -print0 | sort -z | xargs -0 sha256sum)
  else sha256sum < "$1"; fi
}

# build_from_base IMAGE DIR [EXTRA_DIR_TO_COPY_AS_NAME...]: a small Dockerfile in DIR, built in a
# private context (symlinks such as tests/kafka/jars are followed), skipped when its stamp matches.
build_from_base() {
  local image=$1 dir=$2; shift 2
  local base_id stamp ctx
  base_id=$(docker image inspect -f '{{.Id}}' "$BASE_IMAGE")
  stamp=$( { echo "base=$base_id"; tree_sums "$dir"
             for extra in "$@"; do echo "${extra#*=}"; tree_sums "${extra%%=*}"; done
           } | sha256sum | cut -d' ' -f1)
  if [ "$(image_stamp "$image")" = "$stamp" ]; then
    say "$image is up to date"
    return 0
  fi
  ctx=$(mktemp -d "${TMPDIR:-/tmp}/zk2kraft-ctx.XXXXXX")
  cp -a "$dir"/. "$ctx"/
  for extra in "$@"; do
    cp -rL "${extra%%=*}" "$ctx/${extra#*=}"
  done
  say "building $image from $dir"
  if ! DOCKER_BUILDKIT=0 docker build -q --build-arg BASE="$BASE_IMAGE" \
       --label "org.zk2kraft.stamp=$stamp" -t "$image" "$ctx" >"$ctx.log" 2>&1; then
    cat "$ctx.log" >&2
    rm -rf "$ctx" "$ctx.log"
    die "docker build of $image failed"
  fi
  rm -rf "$ctx" "$ctx.log"
}

t_images=$(date +%s)
build_base
build_from_base "$ZK_IMAGE" docker/zookeeper
if [ -f tests/kafka/jars/.complete ]; then
  build_from_base "$KAFKA_IMAGE" docker/kafka tests/kafka/jars=jars \
    tests/kafka/log4j.properties=log4j.properties
else
  say "Kafka jars not fetched (tests/kafka/fetch.sh); $KAFKA_IMAGE not built"
fi
say "images ready in $(( $(date +%s) - t_images )) s: $(docker images --format '{{.Repository}}:{{.Tag}}' \
  'zk2kraft/*' | sort | tr '\n' ' ')"
