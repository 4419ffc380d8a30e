"""Class-data sharing (a dynamic AppCDS archive) for the suite's Kafka 3.9.1 JVMs.

The suite starts hundreds of JVMs on the 3.9.1 jars (brokers, controllers, `kafka-storage
format`, DumpLogSegments, ...), and on the 2-core CI host it is bound by CPU. Most of a JVM's
start-up is loading and verifying the same few thousand classes from the jars; an archive of
them, written once by one broker+controller start (`-XX:ArchiveClassesAtExit`), is mapped by
every later JVM instead (`-XX:SharedArchiveFile`). Nothing Kafka does changes: the same classes
from the same jars, only read from the archive.

`tests/conftest.py` turns it on (`ZK2KRAFT_TEST_CDS=1`); the first 3.9.1 JVM a test process
starts makes the archive, once per host and jar set (cached beside Toxiproxy's server, in
`${XDG_CACHE_HOME:-~/.cache}/zk2kraft/cds/`, keyed by the JVM, the jars' names, sizes and times
and the class path string, which the JVM checks too), under a file lock so that the two pytest
streams of `scripts/test.sh` make it once. `tests/support/kafka.py` adds `archive_flags()` to
its 3.9.1 JVMs only (the other releases' jars are not in it). Benchmarks do not load conftest,
so their JVMs start as operators' do. If the archive cannot be made, the JVMs start without it.

The JVM's own log lines (a CDS warning, say) go to stderr, never stdout: the tools' stdout is
parsed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from tests.support.ports import free_port

__all__ = ["ENABLE_ENV", "archive_flags", "ensure_archive"]

ENABLE_ENV = "ZK2KRAFT_TEST_CDS"
_DUMP_START_S = 240.0  # a broker+controller start, slack for a loaded host


_made: dict[str, Path | None] = {}
_making = threading.Lock()


def archive_flags(java: str, jars: Path, classpath: str, log4j: Path,
                  flags: list[str]) -> list[str]:
    """The flags that map the archive for these jars, with the JVM's log lines sent to stderr;
    none unless `ZK2KRAFT_TEST_CDS` is 1 (tests/conftest.py sets it), or if the archive could
    not be made. The first call of a process finds or makes it (`ensure_archive`)."""
    if os.environ.get(ENABLE_ENV) != "1":
        return []
    with _making:
        if classpath not in _made:
            try:
                _made[classpath] = ensure_archive(java, jars, classpath, log4j, flags)
            except (OSError, subprocess.SubprocessError):
                _made[classpath] = None  # run without it
        archive = _made[classpath]
    if archive is None:
        return []
    return [f"-XX:SharedArchiveFile={archive}", "-Xlog:disable", "-Xlog:all=warning:stderr"]


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "zk2kraft" / "cds"


def _key(java: str, jars: Path, classpath: str, flags: list[str]) -> str:
    h = hashlib.sha256()
    real_java = Path(java).resolve()
    st = real_java.stat()
    h.update(f"{real_java} {st.st_size} {st.st_mtime_ns}\n{classpath}\n{flags}\n".encode())
    for jar in sorted(jars.resolve().glob("*.jar")):
        js = jar.stat()
        h.update(f"{jar.name} {js.st_size} {js.st_mtime_ns}\n".encode())
    return h.hexdigest()[:20]


def ensure_archive(java: str, jars: Path, classpath: str, log4j: Path,
                   flags: list[str]) -> Path | None:
    """The archive for this JVM and jar set, made first if it is not cached yet (one
    broker+controller start, formatted, stopped with SIGTERM: the JVM writes the classes it
    loaded at exit). None if it could not be made; the caller then runs without it.

    Args:
        java: the `java` binary.
        jars: the jar directory (its `*` is `classpath`).
        classpath: the `-cp` value every JVM that maps the archive uses.
        log4j: the server log4j configuration.
        flags: the JVM flags the servers start with (heap aside).
    """
    cache = _cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    key = _key(java, jars, classpath, flags)
    archive = cache / f"kafka-{key}.jsa"
    with open(cache / f"kafka-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other stream waits, then finds it made
        if archive.is_file():
            return archive
        with tempfile.TemporaryDirectory(prefix="zk2kraft-cds-") as tmp:
            made = _dump(java, classpath, log4j, flags, Path(tmp))
            if made is None:
                return None
            os.replace(made, archive)  # whole, or not there
        _prune(cache, keep=archive)
    return archive


def _prune(cache: Path, keep: Path) -> None:
    """Drop archives (and their locks) untouched for a day: each clone's class path makes its
    own (about 45 MB), and a CI clone is used once."""
    day_ago = time.time() - 86400
    for old in cache.glob("kafka-*"):
        try:
            if old.stem != keep.stem and old.stat().st_mtime < day_ago:
                old.unlink()
        except OSError:
            pass  # another stream pruned it first


def _dump(java: str, classpath: str, log4j: Path, flags: list[str], tmp: Path) -> Path | None:
    port, broker_port = free_port(), free_port()
    config = tmp / "server.properties"
    config.write_text(
        "process.roles=broker,controller\nnode.id=1\n"
        f"controller.quorum.voters=1@127.0.0.1:{port}\ncontroller.listener.names=CONTROLLER\n"
        f"listeners=PLAINTEXT://127.0.0.1:{broker_port},CONTROLLER://127.0.0.1:{port}\n"
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
        "inter.broker.listener.name=PLAINTEXT\n"
        f"log.dirs={tmp / 'data'}\noffsets.topic.replication.factor=1\n", encoding="utf-8")
    base = [java, "-Xmx320m", "-XX:+UseSerialGC", *flags, f"-Dlog4j.configuration=file:{log4j}",
            f"-Dkafka.logs.dir={tmp / 'logs'}", "-cp", classpath]
    fmt = subprocess.run([*base, "kafka.tools.StorageTool", "format",
                          "--cluster-id=q1Sh-9_ISia_zwGINzRvyQ", "-c", str(config)],
                         capture_output=True, timeout=180, check=False)
    if fmt.returncode != 0:
        return None
    made = tmp / "kafka.jsa"
    log = tmp / "logs" / "server.log"
    with open(tmp / "stdout", "wb") as out:
        proc = subprocess.Popen([*base, f"-XX:ArchiveClassesAtExit={made}", "kafka.Kafka",
                                 str(config)], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + _DUMP_START_S
        while proc.poll() is None and time.monotonic() < deadline:
            if log.is_file() and "Kafka Server started" in log.read_text(errors="replace"):
                break
            time.sleep(0.2)  # polling the child's log
        if proc.poll() is not None:
            return None
        os.killpg(proc.pid, signal.SIGTERM)  # a clean exit writes the archive
        proc.wait(120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        return None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return made if made.is_file() else None
