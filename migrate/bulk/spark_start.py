"""Start a SparkSession quietly in the background, and hand it over as a `SparkRuntime`.

The JVM's start-up (seconds) overlaps the ZooKeeper read: `SparkStarter.start()` runs it in a
thread and `SparkStarter.get()` joins it. The JVM's output and Spark's log4j2 log go to files in a
private temp dir; the jobs themselves are `migrate.bulk.spark`'s.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from migrate.bulk.spark import SparkRuntime, first_line, jvm_reason
from migrate.errors import MigrateError, SparkError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark import SparkContext

__all__ = ["DEFAULT_DRIVER_MEMORY", "DEFAULT_MASTER", "SparkStarter"]

log = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*]"
DEFAULT_DRIVER_MEMORY = "1g"
_JIT_AND_GC = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# Packages shipped to executors when the master is not local (workers import them by name).
_PACKAGES = ("migrate", "zkreader", "writers", "verify")

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{ISO8601}} %p %c: %m%n
"""


def _ship_code(context: SparkContext, work_dir: Path) -> None:
    """Send our packages to remote executors as one zip (local masters import them directly)."""
    archive = work_dir / "zk2kraft-code.zip"
    root = Path(__file__).resolve().parents[2]  # the directory holding the packages
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for package in _PACKAGES:
            for path in sorted((root / package).rglob("*.py")):
                zf.write(path, path.relative_to(root).as_posix())
    context.addPyFile(str(archive))


def _start_session(master: str, driver_memory: str, work_dir: Path) -> SparkRuntime:
    """Start the JVM and a SparkSession with all console noise redirected into `work_dir`."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    log4j = work_dir / "log4j2.properties"
    log4j.write_text(_LOG4J2.format(log=work_dir / "spark.log"), encoding="utf-8")
    scratch = work_dir / "local"
    scratch.mkdir()
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j} -Dlog4j.configuration=file:{log4j}"
    # the driver JVM (in local mode also the executor) on C1 only with the serial collector: a
    # migration is one short job, where C2's compiling and G1's threads cost more CPU than they
    # give back (measured in local mode: docs/benchmarks.md); remote executors keep their own
    driver_opts = f"{java_opts} {_JIT_AND_GC}"
    conf = (
        SparkConf()
        .setMaster(master)
        .setAppName("zk2kraft")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.driver.memory", driver_memory)
        .set("spark.driver.extraJavaOptions", driver_opts)
        .set("spark.executor.extraJavaOptions", java_opts)
        .set("spark.local.dir", str(scratch))
        .set("spark.pyspark.python", sys.executable)
        .set("spark.pyspark.driver.python", sys.executable)
        .set("spark.python.worker.reuse", "true")
        .set("spark.driver.maxResultSize", "0")
        .set("spark.sql.shuffle.partitions", "8")
    )
    console: IO[bytes] = open(work_dir / "jvm.out", "ab")  # noqa: SIM115 - owned by the JVM
    try:
        gateway = launch_gateway(  # type: ignore[no-untyped-call]
            conf, popen_kwargs={"stdout": console, "stderr": console}
        )
    finally:
        console.close()  # the child keeps its own descriptor
    context = SparkContext(conf=conf, gateway=gateway)
    context.setLogLevel("ERROR")
    session = SparkSession(context)
    proc = getattr(gateway, "proc", None)
    runtime = SparkRuntime(
        session, master=master, work_dir=work_dir, jvm_pid=getattr(proc, "pid", None)
    )
    if not master.startswith("local"):
        _ship_code(context, work_dir)
    return runtime


class SparkStarter:
    """Starts a SparkSession in a background thread; `get()` joins it.

    Usage::

        starter = SparkStarter("local[*]").start()   # returns at once
        snapshot = read_cluster(...)                  # JVM starts meanwhile
        spark = starter.get()                         # SparkRuntime, or SparkError
        try: ...
        finally: starter.stop()

    Args:
        master: Spark master URL (`local[*]`, `spark://host:7077`, ...).
        driver_memory: `spark.driver.memory` (modest by default: the records live in Python).
        temp_root: where the private work dir is created (default: the system temp dir).
        warmup: run once on the new runtime right after start-up (in the same background
            thread), e.g. a small job so the Python workers are forked and have imported the
            pipeline before the first real job.
    """

    def __init__(
        self,
        master: str = DEFAULT_MASTER,
        *,
        driver_memory: str | None = None,
        temp_root: Path | None = None,
        warmup: Callable[[SparkRuntime], object] | None = None,
    ) -> None:
        self.master = master
        self._warmup = warmup
        self._driver_memory = driver_memory or os.environ.get(
            "ZK2KRAFT_SPARK_DRIVER_MEMORY", DEFAULT_DRIVER_MEMORY
        )
        self._temp_root = temp_root
        self._thread: threading.Thread | None = None
        self._runtime: SparkRuntime | None = None
        self._error: BaseException | None = None
        self._work_dir: Path | None = None

    def start(self) -> SparkStarter:
        """Begin starting Spark in a daemon thread and return immediately."""
        if self._thread is not None:
            return self
        self._work_dir = Path(tempfile.mkdtemp(prefix="zk2kraft-spark-", dir=self._temp_root))
        self._thread = threading.Thread(target=self._run, name="spark-starter", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        assert self._work_dir is not None
        try:
            self._runtime = _start_session(self.master, self._driver_memory, self._work_dir)
            if self._warmup is not None:
                # start the Python workers (and their imports) while the caller still works
                self._warmup(self._runtime)
        except BaseException as exc:  # noqa: BLE001 - handed to get()
            self._error = exc

    def get(self, timeout: float | None = None) -> SparkRuntime:
        """Wait for the session started by `start()` (starting it now if needed).

        Raises:
            SparkError: Spark could not start (bad master, no Java, JVM exited, timeout); the
                message names the master and Spark's log file.
        """
        if self._thread is None:
            self.start()
        assert self._thread is not None and self._work_dir is not None
        self._thread.join(timeout)
        log_path = self._work_dir / "jvm.out"
        if self._thread.is_alive():
            raise SparkError(
                f"Spark did not start on --spark-master {self.master} within {timeout} s "
                f"(Spark's log: {log_path})"
            )
        if self._error is not None:
            error = self._error
            if isinstance(error, MigrateError):
                raise error
            reason = jvm_reason(log_path) or first_line(str(error)) or type(error).__name__
            raise SparkError(
                f"Spark could not start on --spark-master {self.master}: {reason} "
                f"(Spark's log: {log_path})"
            ) from error
        assert self._runtime is not None
        return self._runtime

    def stop(self) -> None:
        """Stop Spark if it started (waiting for a start still under way). Idempotent."""
        if self._thread is not None:
            self._thread.join()
        if self._runtime is not None:
            self._runtime.stop()
        elif self._work_dir is not None and self._error is None:
            shutil.rmtree(self._work_dir, ignore_errors=True)

    def __enter__(self) -> SparkStarter:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
