"""The one place zk2kraft touches PySpark: start a session quietly, run typed jobs, stop it.

Why a wrapper: pyspark is untyped, prints to the user's terminal (JVM warnings, log4j, progress
bars, Python worker tracebacks) and raises py4j errors that mean nothing to an operator. Here:

* the SparkSession is started in a background thread (`migrate.bulk.spark_start`), so the
  JVM's start-up (seconds) overlaps the ZooKeeper read;
* the JVM's stdout/stderr (which also carries the Python workers' stderr) and Spark's log4j2 log go
  to files in a private temp dir, the UI and console progress are off;
* jobs are typed functions (`map_batches`, `map_chunks`, `diff_join`) whose callables must be
  top-level, picklable functions; one of our errors raised inside a worker (a `TranslationError`
  naming a znode) is carried back as a value and re-raised unchanged on the driver, anything else
  from py4j/Spark becomes `SparkError` (exit 3) naming the log file;
* `map_batches` is the bulk path: Arrow record batches in, Arrow record batches out, each
  batch one Arrow IPC stream the JVM carries as bytes, so no Python object crosses the JVM
  boundary per row and the JVM never converts Arrow to its own rows.

Nothing else in the project imports pyspark; pyspark itself is imported lazily so `--help` and
`inspect` never start a JVM.
"""

from __future__ import annotations

import logging
import os
import resource
import shutil
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from migrate.errors import SparkError

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

__all__ = ["SparkRuntime", "WorkerFailure", "first_line", "jvm_reason", "own_peak_rss_bytes"]

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
D = TypeVar("D")



@dataclass(frozen=True, slots=True)
class WorkerFailure:
    """An error raised inside a Spark task, carried back as a value.

    Our errors (the four packages' error trees) are pickled as they are so the driver re-raises the
    very same error (same class, same message naming the znode); py4j would otherwise flatten them
    into a Java stack trace string.
    """

    error: BaseException


def _is_ours(exc: BaseException) -> bool:
    """One of the four packages' errors (imported here: workers import this module)."""
    from migrate.cli.exit_codes import exit_code_for

    return exit_code_for(exc) is not None


def _guard_chunks(
    fn: Callable[[T], R],
) -> Callable[[Iterable[T]], Iterator[R | WorkerFailure]]:
    """Wrap `fn` for `mapPartitions`: one result per chunk, our errors returned as values."""

    def run(chunks: Iterable[T]) -> Iterator[R | WorkerFailure]:
        for chunk in chunks:
            try:
                yield fn(chunk)
            except Exception as exc:  # noqa: BLE001 - carried back and re-raised on the driver
                if _is_ours(exc):
                    yield WorkerFailure(exc)
                else:
                    raise

    return run


def _to_ipc(batch: pa.RecordBatch) -> bytes:
    """One batch as an Arrow IPC stream (`_from_ipc` reads it back)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    data: bytes = sink.getvalue().to_pybytes()
    return data


def _from_ipc(data: bytes) -> pa.RecordBatch:
    import pyarrow as pa

    with pa.ipc.open_stream(pa.py_buffer(data)) as reader:
        return reader.read_next_batch()


def _ipc_apply(fn: Callable[[pa.RecordBatch], pa.RecordBatch], data: bytes) -> bytes:
    """One task of `map_batches`: an Arrow IPC stream in, one out."""
    return _to_ipc(fn(_from_ipc(data)))


def _echo(data: bytes) -> bytes:
    return data


def _raise_failures(results: Sequence[R | WorkerFailure]) -> list[R]:
    out: list[R] = []
    for item in results:
        if isinstance(item, WorkerFailure):
            raise item.error
        out.append(item)
    return out


def _diff_pairs(
    diff: Callable[[K, V | None, V | None], list[D]],
) -> Callable[[tuple[K, tuple[V | None, V | None]]], list[D]]:
    """Adapt a `(key, left, right) -> differences` function to a joined RDD row."""

    def run(row: tuple[K, tuple[V | None, V | None]]) -> list[D]:
        key, (left, right) = row
        return diff(key, left, right)

    return run


class SparkRuntime:
    """A running Spark session and the typed jobs the pipeline runs on it.

    Attributes:
        master: the Spark master URL.
        work_dir: private temp dir holding Spark's log files and local scratch space.
        log_path: the JVM's console output (and the Python workers' stderr).
    """

    def __init__(
        self,
        session: SparkSession,
        *,
        master: str,
        work_dir: Path,
        jvm_pid: int | None,
    ) -> None:
        self._session = session
        self._context: SparkContext = session.sparkContext
        self.master = master
        self.work_dir = work_dir
        self.log_path = work_dir / "jvm.out"
        self._jvm_pid = jvm_pid
        self._stopped = False
        self.failed = False  # a job failed: keep the log files for the operator

    @property
    def session(self) -> SparkSession:
        """The SparkSession (only for code in this module's tests and for DataFrame users)."""
        return self._session

    @property
    def default_parallelism(self) -> int:
        """How many tasks Spark runs at once (cores in `local[*]`)."""
        return int(self._context.defaultParallelism)

    @property
    def jvm_pid(self) -> int | None:
        """Process id of the driver JVM (None when attached to an existing gateway)."""
        return self._jvm_pid

    def jvm_peak_rss_bytes(self) -> int | None:
        """Peak resident memory of the driver JVM so far (`VmHWM`), or None if unknown.

        Read from /proc while the JVM is alive: the benchmark reports it next to the CLI's own
        peak, since the JVM is a child process and `ru_maxrss` of children only counts reaped ones.
        """
        if self._jvm_pid is None:
            return None
        return _vm_hwm(self._jvm_pid)

    def python_workers_peak_rss_bytes(self) -> int | None:
        """Summed peak resident memory (`VmHWM`) of the PySpark Python processes under the JVM.

        The driver JVM forks PySpark's daemon, which forks the workers; they are part of what a
        Spark run costs in memory but not of the JVM's own VmHWM nor of this process's
        ru_maxrss. None when the JVM is unknown; 0 when no worker is alive.
        """
        if self._jvm_pid is None:
            return None
        total = 0
        for pid in _descendants(self._jvm_pid):
            peak = _vm_hwm(pid)
            if peak is not None:
                total += peak
        return total

    def cpu_seconds(self) -> tuple[float, float] | None:
        """CPU seconds used so far by the driver JVM and by the PySpark Python processes under it
        (exited ones included once their parent reaped them), from /proc; None when the JVM is
        unknown. The benchmark takes differences around a job: on a loaded machine wall time
        mostly measures the wait for a core, CPU time what the job costs."""
        if self._jvm_pid is None:
            return None
        workers = 0.0
        for pid in _descendants(self._jvm_pid):
            workers += _cpu_s(pid) or 0.0
        return _cpu_s(self._jvm_pid) or 0.0, workers

    def map_chunks(self, chunks: Sequence[T], fn: Callable[[T], R]) -> list[R]:
        """Apply `fn` to every chunk in Spark `mapPartitions`, one Spark partition per chunk.

        Args:
            chunks: the work, already cut into chunks (picklable values).
            fn: a top-level (picklable) pure function of one chunk.

        Returns:
            `fn(chunk)` for every chunk, in the order of `chunks` (Spark's `collect` keeps
            partition order, and each partition holds exactly one chunk).

        Raises:
            SparkError: the job failed for a reason other than one of our own errors.
            MigrateError, WriterError, ...: one of our errors raised by `fn`, re-raised.
        """
        if not chunks:
            return []
        context = self._context
        with _spark_errors(self, "translate+encode job"):
            rdd = context.parallelize(list(chunks), numSlices=len(chunks))
            results = rdd.mapPartitions(_guard_chunks(fn), preservesPartitioning=True).collect()
        return _raise_failures(results)

    def warm_transport(self, mib: int = 4) -> None:
        """Move `mib` MiB of bytes to every task slot and back in one job, right after start.

        The JVM's first job at a real size cost 0.4-0.5 CPU s more than the next ones (50,000
        partitions, docs/benchmarks.md, "Spark vs in-process") though a one-topic job had warmed
        the same path: its copy loops get compiled only at volume. Moving plain bytes
        warms them at almost no Python cost.
        """
        self.map_chunks([bytes(mib << 20)] * max(1, self.default_parallelism), _echo)

    def map_each_grouped(
        self,
        items: Sequence[T],
        fn: Callable[[T], R],
        pairs: Callable[[R], Iterable[tuple[K, V]]],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[list[R], dict[K, list[V]]]:
        """One task per item (`fn(item)`), the results collected in order, plus every result's
        `pairs` grouped by key in Spark (`groupByKey` over the cached results).

        `fn` must catch what it means to report (the fleet's tasks turn an unreachable cluster
        into a row): anything it raises fails the job. `progress(done, total)` is called on this
        thread with the finished tasks while the job runs (Spark's status tracker, read each
        time the collecting thread has not finished within a quarter second).

        Raises:
            SparkError: the job failed.
        """
        import threading

        if not items:
            return [], {}
        context = self._context
        total = len(items)
        with _spark_errors(self, "fleet job"):
            results_rdd = context.parallelize(list(items), numSlices=total).map(fn).cache()
            collected: list[list[R]] = []
            failed: list[BaseException] = []

            def collect() -> None:
                try:
                    collected.append(results_rdd.collect())
                except BaseException as exc:  # noqa: BLE001 - re-raised on this thread
                    failed.append(exc)

            worker = threading.Thread(target=collect, name="spark-collect", daemon=True)
            worker.start()
            tracker = context.statusTracker()
            while worker.is_alive():
                worker.join(0.25)  # waits on the job, not a pause: returns as soon as it ends
                if progress is not None:
                    done = 0
                    for stage_id in tracker.getActiveStageIds():
                        info = tracker.getStageInfo(stage_id)
                        done += info.numCompletedTasks if info is not None else 0
                    progress(min(done, total), total)
            if failed:
                raise failed[0]
            if progress is not None:
                progress(total, total)
            # one reducer: a fleet's pairs are few, and each shuffle partition is a task
            # (20 of them cost 1.0-1.2 s against 0.6 s, 20 clusters, docs/benchmarks.md)
            grouped = dict(results_rdd.flatMap(pairs).groupByKey(numPartitions=1)
                           .mapValues(list).collect())
            results_rdd.unpersist()
        return collected[0], grouped

    def map_batches(
        self,
        batches: Sequence[pa.RecordBatch],
        fn: Callable[[pa.RecordBatch], pa.RecordBatch],
        schema: pa.Schema,
    ) -> pa.Table:
        """Apply `fn` to every Arrow batch in Spark, one task a batch; the results as one table.

        Each batch travels as one Arrow IPC stream in an opaque bytes value (`map_chunks`), and
        each result comes back the same way: the JVM moves bytes and never converts Arrow to its
        rows and back. Measured against `mapInArrow` over a DataFrame, which did, the Spark
        side's CPU per partition fell by about a third (docs/benchmarks.md, "Spark vs
        in-process").

        Args:
            batches: the work, already cut into batches of one schema.
            fn: a top-level (picklable) pure function of one batch, returning a batch of `schema`.
            schema: the output schema.

        Returns:
            The results in the order of `batches`.

        Raises:
            SparkError: the job failed for a reason other than one of our own errors.
            MigrateError, WriterError, ...: one of our errors raised by `fn`, re-raised.
        """
        import pyarrow as pa

        if not batches:
            return schema.empty_table()
        outs = self.map_chunks([_to_ipc(b) for b in batches], partial(_ipc_apply, fn))
        return pa.Table.from_batches([_from_ipc(o) for o in outs]).cast(schema)

    def diff_join(
        self,
        left: Sequence[tuple[K, V]],
        right: Sequence[tuple[K, V]],
        diff: Callable[[K, V | None, V | None], list[D]],
        *,
        partitions: int | None = None,
    ) -> list[D]:
        """Full outer join two keyed tables in Spark and collect `diff(key, left, right)`.

        A key present on one side only is joined with None on the other. The result's order is
        Spark's; callers sort it (parity differences have a stable sort key).

        Raises:
            SparkError: the job failed.
        """
        if not left and not right:
            return []
        slices = partitions or max(1, self.default_parallelism)
        context = self._context
        with _spark_errors(self, "parity join"):
            lrdd = context.parallelize(list(left), slices)
            rrdd = context.parallelize(list(right), slices)
            joined = lrdd.fullOuterJoin(rrdd, numPartitions=slices)
            out: list[D] = joined.flatMap(_diff_pairs(diff)).collect()
        return out

    def stop(self) -> None:
        """Stop the session and the JVM; remove the temp dir unless a job failed. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self._session.stop()
        except Exception as exc:  # noqa: BLE001 - stopping must not mask the real outcome
            log.debug("spark stop failed: %s", exc)
        _stop_gateway(self._context)
        if not self.failed:
            shutil.rmtree(self.work_dir, ignore_errors=True)


class _SparkErrors:
    """Context manager mapping py4j/pyspark exceptions to `SparkError`."""

    def __init__(self, runtime: SparkRuntime, what: str) -> None:
        self._runtime = runtime
        self._what = what

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if exc is None or not isinstance(exc, Exception):
            return
        if _is_ours(exc):
            return
        if _is_spark_exception(exc):
            self._runtime.failed = True
            raise SparkError(
                f"Spark {self._what} failed on {self._runtime.master}: "
                f"{first_line(str(exc))} (Spark's log: {self._runtime.log_path})"
            ) from exc


def _spark_errors(runtime: SparkRuntime, what: str) -> _SparkErrors:
    return _SparkErrors(runtime, what)


def _is_spark_exception(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    return module.startswith(("py4j", "pyspark"))


def first_line(text: str) -> str:
    """The informative line of a py4j/pyspark message (a worker traceback's last line)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "unknown error"
    if lines[0].endswith(":") and len(lines) > 1:
        return lines[-1][:300]
    return lines[0][:300]


def jvm_reason(log_path: Path) -> str | None:
    """The JVM's own last exception line (e.g. a master URL it cannot parse), if it left one."""
    try:
        lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        if "Exception" in line or "Error:" in line:
            return line.strip()[:300]
    return None


def _stop_gateway(context: SparkContext) -> None:
    """Shut the py4j gateway and wait for the JVM process, so no JVM outlives the command."""
    gateway = getattr(context, "_gateway", None)
    proc = getattr(gateway, "proc", None)
    try:
        if gateway is not None:
            gateway.shutdown()
    except Exception as exc:  # noqa: BLE001
        log.debug("py4j gateway shutdown failed: %s", exc)
    if proc is not None:
        try:
            if proc.stdin is not None:
                proc.stdin.close()  # the JVM exits when this pipe closes
            proc.wait(timeout=20)
        except Exception:  # noqa: BLE001
            proc.kill()
            proc.wait(timeout=10)
    # pyspark keeps class-level references to the context/gateway; clear them so a later
    # session in the same process (tests) starts a fresh JVM.
    from pyspark import SparkContext as _SparkContext

    _SparkContext._gateway = None
    _SparkContext._jvm = None
    _SparkContext._active_spark_context = None


def own_peak_rss_bytes() -> int:
    """This process's peak resident memory over its whole life (`ru_maxrss`, KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _vm_hwm(pid: int) -> int | None:
    """A live process's peak resident memory in bytes, from /proc (None if it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _cpu_s(pid: int) -> float | None:
    """A live process's CPU seconds, its reaped children's included (/proc/<pid>/stat fields
    utime, stime, cutime, cstime), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`, read from /proc/<pid>/task/*/children."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", encoding="ascii") as children:
                    kids = [int(c) for c in children.read().split()]
            except OSError:
                continue
            found.extend(kids)
            pending.extend(kids)
    return found
