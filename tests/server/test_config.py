"""Settings: flags over environment over defaults; a bad value names the variable to fix."""

from __future__ import annotations

import io
import socket
from pathlib import Path
from typing import Any

import pytest

from netsight.cli import EXIT_TOOL_ERROR, main
from netsight.server.config import Auth, ConfigError, Settings, Transport, load_settings


def test_defaults_suit_a_workstation() -> None:
    settings = load_settings({}, {})
    assert settings == Settings(cluster_name="local")
    assert (settings.host, settings.port, settings.transport) == ("127.0.0.1", 8080,
                                                                  Transport.HTTP)
    assert settings.tool_timeout == 10.0
    assert settings.log_level == "INFO"


def test_the_environment_configures_and_flags_win() -> None:
    env = {"CLUSTER_NAME": "prod-eu-1", "PORT": "9000", "LOG_LEVEL": "warn",
           "TOOL_TIMEOUT": "250ms", "HOST": "0.0.0.0"}
    settings = load_settings({}, env)
    assert (settings.cluster_name, settings.port, settings.log_level, settings.tool_timeout,
            settings.host) == ("prod-eu-1", 9000, "WARNING", 0.25, "0.0.0.0")
    flags: dict[str, Any] = {"port": "9100", "tool_timeout": "1m", "cluster_name": "staging"}
    settings = load_settings(flags, env)
    assert (settings.port, settings.tool_timeout, settings.cluster_name) == (9100, 60.0,
                                                                             "staging")


def test_secret_names_are_watched_unless_turned_off() -> None:
    assert load_settings({}, {}).secret_metadata is True
    assert load_settings({}, {"SECRET_METADATA": "false"}).secret_metadata is False
    assert load_settings({}, {"SECRET_METADATA": "True"}).secret_metadata is True


def test_the_demo_names_its_cluster() -> None:
    assert load_settings({"demo": True}, {}).cluster_name == "demo"
    assert load_settings({"context": "kind-dev"}, {}).cluster_name == "kind-dev"


@pytest.mark.parametrize(("flags", "env", "names"), [
    ({}, {"PORT": "http"}, "PORT"),
    ({"port": "70000"}, {"PORT": "8080"}, "--port"),
    ({}, {"TOOL_TIMEOUT": "soon"}, "TOOL_TIMEOUT"),
    ({}, {"TOOL_TIMEOUT": "0s"}, "TOOL_TIMEOUT"),
    ({}, {"LOG_LEVEL": "loud"}, "LOG_LEVEL"),
    ({}, {"SECRET_METADATA": "sometimes"}, "SECRET_METADATA"),
    ({}, {"CLUSTER_NAME": "two words"}, "CLUSTER_NAME"),
    ({}, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, "CLUSTER_NAME"),
    ({"demo": True, "context": "prod"}, {}, "--demo"),
])
def test_a_bad_value_fails_naming_the_variable(flags: dict[str, Any], env: dict[str, str],
                                               names: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(flags, env)
    assert raised.value.source == names
    assert str(raised.value).startswith(f"{names}: ")


def test_serve_refuses_to_start_on_bad_configuration(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    monkeypatch.setenv("TOOL_TIMEOUT", "forever")
    assert main(["serve", "--demo"], stdout=io.StringIO()) == EXIT_TOOL_ERROR
    assert "TOOL_TIMEOUT: a positive duration" in capsys.readouterr().err


def test_serve_refuses_a_busy_port_before_starting_anything(
        capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--demo", "--port", str(port)]) == EXIT_TOOL_ERROR
    assert f"--host/--port: cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_serve_without_a_usable_kubeconfig_says_what_to_give(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "kubeconfig"
    assert main(["serve", "--kubeconfig", str(missing), "--port", "0"]) == EXIT_TOOL_ERROR
    err = capsys.readouterr().err
    assert "--kubeconfig: no usable Kubernetes configuration" in err
    assert "--demo" in err


def test_auth_modes_that_cannot_be_honoured_refuse_to_start() -> None:
    with pytest.raises(ConfigError, match="--insecure-no-auth") as raised:
        load_settings({"auth": "none"}, {"HOST": "0.0.0.0"})
    assert raised.value.source == "--auth"
    assert load_settings({"auth": "none", "insecure_no_auth": True},
                         {"HOST": "0.0.0.0"}).auth is Auth.NONE
    assert load_settings({"auth": "none"}, {}).auth is Auth.NONE  # loopback: nothing to expose
    assert load_settings({}, {"HOST": "0.0.0.0"}).auth is Auth.AUTO


def test_auth_is_required_off_loopback_or_when_asked_for() -> None:
    assert not load_settings({}, {}).authenticates  # 127.0.0.1: a workstation
    assert not load_settings({"host": "::1"}, {}).authenticates
    assert load_settings({}, {"HOST": "0.0.0.0"}).authenticates
    assert load_settings({"auth": "tokenreview"}, {}).authenticates
    assert load_settings({}, {"AUTH_MODE": "tokenreview"}).authenticates
    assert not load_settings({"auth": "none", "insecure_no_auth": True},
                             {"HOST": "0.0.0.0"}).authenticates
    with pytest.raises(ConfigError, match="one of auto, tokenreview, none") as raised:
        load_settings({}, {"AUTH_MODE": "oidc"})
    assert raised.value.source == "AUTH_MODE"
