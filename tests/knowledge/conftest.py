"""The knowledge base's tests run once per backend: SQLite always, PostgreSQL from a real
server started here — Debian's binaries (``.ci/get-postgresql.sh`` installs them), run as
an unprivileged user when the tests run as root, as PostgreSQL requires. Where none can be
had the PostgreSQL variants skip, saying why."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BACKENDS = ["sqlite", "postgresql"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class PostgresServer:
    """One throwaway cluster: initdb into a temporary directory, postgres on loopback."""

    def __init__(self, bindir: Path) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="netsight-pg-"))
        self.port = _free_port()
        self.user: dict[str, Any] = {}
        if os.geteuid() == 0:
            # PostgreSQL refuses to run as root: Debian's package creates its own user.
            name = "postgres" if _user_exists("postgres") else "nobody"
            self.user = {"user": name, "group": pwd.getpwnam(name).pw_gid}
            os.chmod(self.root, 0o777)
        data = self.root / "data"
        subprocess.run([str(bindir / "initdb"), "-D", str(data), "-U", "netsight",
                        "--auth=trust", "-E", "UTF8", "--no-sync"],
                       check=True, capture_output=True, timeout=120, **self.user)
        self.process = subprocess.Popen(
            [str(bindir / "postgres"), "-D", str(data), "-p", str(self.port),
             "-h", "127.0.0.1", "-k", str(self.root), "-c", "fsync=off",
             "-c", "full_page_writes=off", "-c", "synchronous_commit=off"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **self.user)
        self.url = f"postgresql://netsight@127.0.0.1:{self.port}/postgres"
        self._wait()

    def _wait(self) -> None:
        import psycopg

        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    err = self.process.stderr.read().decode() if self.process.stderr else ""
                    raise RuntimeError(f"postgres did not start: {err[-500:]}") from None
                time.sleep(0.1)

    def database(self) -> str:
        import psycopg

        name = f"kb_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return self.url.rsplit("/", 1)[0] + f"/{name}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()
        shutil.rmtree(self.root, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer | str]:
    """The server, or why there is none (a string)."""
    bindir = _bindir()
    try:
        import psycopg  # noqa: F401
    except ImportError:
        yield "psycopg is not installed (pip install 'netsight[postgres]')"
        return
    if bindir is None:
        yield ("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb): "
               "bash .ci/get-postgresql.sh installs Debian's")
        return
    server = PostgresServer(bindir)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a fresh knowledge store lives: a SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "knowledge.db")
    server = request.getfixturevalue("postgres")
    if isinstance(server, str):
        pytest.skip(f"PostgreSQL variant: {server}")
    return server.database()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
