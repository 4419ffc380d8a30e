"""A real Spark standalone cluster for the tests: one master and one worker, as local processes.

Both run from pyspark's own distribution (`pyspark/bin/spark-class`, or `java -cp 'jars/*'` where
that script is missing) on loopback with free ports, each in its own process group with its
console (Spark's default log4j2 writes INFO to stderr) captured in a file under the caller's
directory. Readiness is the worker registered with the master (the master's log says
"Registering worker" or the worker's "Successfully registered with master"), bounded in time; a
part that does not come up raises `SparkStandaloneError` carrying the tails of both logs, which
the tests turn into `pytest.fail` (never a skip). `stop()` kills both process groups (the worker's
executors with them).

`env()` is what the master, the worker and the driver (the CLI) all need: `SPARK_LOCAL_IP` on
loopback, `PYSPARK_PYTHON` this interpreter, and `PYTHONPATH` the repository root, so the
executors' Python workers import the project.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from tests.support.ports import free_ports
from tests.support.process_group import log_tail, stop_group

__all__ = ["REPO_ROOT", "SparkStandalone", "SparkStandaloneError", "spark_home"]

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 15.0
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
MASTER_READY = "Registering worker"
WORKER_READY = "Successfully registered with master"


class SparkStandaloneError(RuntimeError):
    """The standalone master or worker did not come up; the message holds both logs' tails."""


def spark_home() -> Path:
    """pyspark's directory: its `jars/` and `bin/spark-class`."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


class SparkStandalone:
    """A master and one worker (`cores`, `memory`) on 127.0.0.1, logs and work dir under `root`.

    Usage::

        with SparkStandalone(tmp_path) as spark:
            run(..., "--spark-master", spark.master_url, env=spark.env())
    """

    def __init__(self, root: Path, *, cores: int = 2, memory: str = "1g") -> None:
        self.root = root
        self.cores = cores
        self.memory = memory
        self.port, self.webui_port, self.worker_webui_port = free_ports(3)
        self.master_url = f"spark://127.0.0.1:{self.port}"
        self.log_dir = root / "spark-logs"
        self.work_dir = root / "spark-work"
        self.master_log = self.log_dir / "master.out"
        self.worker_log = self.log_dir / "worker.out"
        self._procs: list[subprocess.Popen[bytes]] = []

    def env(self) -> dict[str, str]:
        """The environment of the master, the worker and the driver (on top of os.environ)."""
        path = os.environ.get("PYTHONPATH", "")
        return {
            **os.environ,
            "SPARK_HOME": str(spark_home()),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(self.log_dir),
            "SPARK_WORKER_DIR": str(self.work_dir),
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "PYTHONPATH": str(REPO_ROOT) + (os.pathsep + path if path else ""),
        }

    def _command(self, main: str, *args: str) -> list[str]:
        home = spark_home()
        script = home / "bin" / "spark-class"
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script), main, *args]
        return ["java", "-Xmx256m", "-cp", f"{home / 'jars'}/*", main, *args]

    def _spawn(self, command: list[str], log: Path) -> None:
        out: IO[bytes] = open(log, "ab")  # noqa: SIM115 - handed to the child
        try:
            self._procs.append(subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self.env(), cwd=self.root, start_new_session=True))
        finally:
            out.close()

    def logs(self) -> str:
        """Both logs' tails, for a failure message."""
        return (f"--- master ({self.master_log}) ---\n{log_tail(self.master_log)}\n"
                f"--- worker ({self.worker_log}) ---\n{log_tail(self.worker_log)}")

    def start(self, timeout: float = START_TIMEOUT_S) -> SparkStandalone:
        """Start the master and the worker; return once the worker is registered.

        Raises:
            SparkStandaloneError: a process exited, or no registration within `timeout`.
        """
        try:
            self._start(timeout)
        except BaseException:
            self.stop()  # nothing outlives a failed start
            raise
        return self

    def _start(self, timeout: float) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self._spawn(self._command(MASTER_CLASS, "--host", "127.0.0.1", "--port", str(self.port),
                                  "--webui-port", str(self.webui_port)), self.master_log)
        self._spawn(self._command(WORKER_CLASS, "--host", "127.0.0.1", "--cores", str(self.cores),
                                  "--memory", self.memory, "--webui-port",
                                  str(self.worker_webui_port), "--work-dir", str(self.work_dir),
                                  self.master_url), self.worker_log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.registered():
                return
            for proc, name in zip(self._procs, ("master", "worker"), strict=True):
                if proc.poll() is not None:
                    raise SparkStandaloneError(
                        f"the Spark {name} exited with {proc.returncode} before the worker "
                        f"registered\n{self.logs()}")
            time.sleep(0.5)
        raise SparkStandaloneError(
            f"the Spark worker did not register with {self.master_url} within {timeout:.0f} s\n"
            f"{self.logs()}")

    def registered(self) -> bool:
        """The master's or the worker's log says the worker is registered."""
        return (MASTER_READY in _read(self.master_log)
                or WORKER_READY in _read(self.worker_log))

    def app_dirs(self) -> list[Path]:
        """The applications' directories the worker made (`app-*`, one an application run)."""
        return sorted(self.work_dir.glob("app-*"))

    def stop(self) -> None:
        """Kill both process groups (TERM, then KILL after `STOP_TIMEOUT_S`); idempotent."""
        for proc in reversed(self._procs):
            stop_group(proc, STOP_TIMEOUT_S)
            # the executors the worker forked share its group; make sure none outlives it
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self._procs.clear()

    def __enter__(self) -> SparkStandalone:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
