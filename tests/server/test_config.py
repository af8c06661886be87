"""Settings: flags over environment over defaults; a bad value names the variable to fix."""

from __future__ import annotations

import io
import socket
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.declarations import Toolset
from netsight.cli import EXIT_TOOL_ERROR, main
from netsight.server.config import (
    Auth,
    ConfigError,
    LogFormat,
    Settings,
    Transport,
    load_settings,
)


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


def test_provider_status_is_watched_when_asked_for_and_by_the_demo() -> None:
    assert load_settings({}, {}).provider_status is False
    assert load_settings({}, {"PROVIDER_STATUS": "true"}).provider_status is True
    assert load_settings({"provider_status": True}, {"PROVIDER_STATUS": "false"}
                         ).provider_status is True
    assert load_settings({"demo": True}, {}).provider_status is True
    assert load_settings({"demo": True}, {"PROVIDER_STATUS": "false"}).provider_status is False


def test_dns_config_maps_are_watched_only_when_asked_for() -> None:
    assert load_settings({}, {}).dns_config is False
    assert load_settings({}, {"DNS_CONFIG": "true"}).dns_config is True
    assert load_settings({"dns_config": True}, {"DNS_CONFIG": "false"}).dns_config is True


def test_probe_settings_are_read_and_default_to_the_architecture_decisions() -> None:
    assert load_settings({}, {}).probe_namespace == "mcp-diagnostics"
    assert load_settings({}, {}).max_concurrent_probes == 5
    env = {"PROBE_NAMESPACE": "netsight-probes", "MAX_CONCURRENT_PROBES": "2",
           "PROBE_IMAGE": "registry.example.com:5000/tools/netshoot:v0.13"}
    settings = load_settings({}, env)
    assert (settings.probe_namespace, settings.probe_image, settings.max_concurrent_probes) \
        == ("netsight-probes", "registry.example.com:5000/tools/netshoot:v0.13", 2)
    assert load_settings({"max_concurrent_probes": "3"}, env).max_concurrent_probes == 3


def test_audiences_come_from_the_variable_or_the_repeated_flag() -> None:
    assert load_settings({}, {}).auth_audiences == ()
    assert load_settings({}, {"AUTH_AUDIENCES": "netsight, https://n.example.com"}
                         ).auth_audiences == ("netsight", "https://n.example.com")
    assert load_settings({"auth_audience": ["a", "b"]}, {"AUTH_AUDIENCES": "c"}
                         ).auth_audiences == ("a", "b")


def test_toolsets_come_from_the_flag_or_the_variable() -> None:
    assert load_settings({}, {}).toolsets is None  # every tool
    assert load_settings({}, {"TOOLSETS": "core, Policy"}).toolsets == {Toolset.CORE,
                                                                          Toolset.POLICY}
    assert load_settings({"toolsets": "mesh"}, {"TOOLSETS": "core"}).toolsets == {Toolset.MESH}


def test_an_unknown_toolset_is_refused_naming_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({"toolsets": "core,probing"}, {})
    assert str(raised.value) == (
        "--toolsets: unknown toolset 'probing'; valid toolsets: core, policy, routing, mesh, "
        "probes, notes, whatif, providers, events (comma-separated, e.g. 'core,policy')")


def test_log_lines_are_text_unless_json_is_asked_for() -> None:
    assert load_settings({}, {}).log_format is LogFormat.TEXT
    assert load_settings({}, {"LOG_FORMAT": "JSON"}).log_format is LogFormat.JSON
    assert load_settings({"log_format": "text"}, {"LOG_FORMAT": "json"}).log_format \
        is LogFormat.TEXT


def test_serve_refuses_an_otlp_protocol_it_cannot_speak(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc+tls")
    assert main(["serve", "--demo"], stdout=io.StringIO()) == EXIT_TOOL_ERROR
    assert "OTEL_EXPORTER_OTLP_PROTOCOL: grpc or http/protobuf" in capsys.readouterr().err


def test_the_demo_names_its_cluster() -> None:
    assert load_settings({"demo": True}, {}).cluster_name == "demo"
    assert load_settings({"context": "kind-dev"}, {}).cluster_name == "kind-dev"


@pytest.mark.parametrize(("flags", "env", "names"), [
    ({}, {"PORT": "http"}, "PORT"),
    ({"port": "70000"}, {"PORT": "8080"}, "--port"),
    ({}, {"TOOL_TIMEOUT": "soon"}, "TOOL_TIMEOUT"),
    ({}, {"TOOL_TIMEOUT": "0s"}, "TOOL_TIMEOUT"),
    ({}, {"LOG_LEVEL": "loud"}, "LOG_LEVEL"),
    ({}, {"LOG_FORMAT": "logfmt"}, "LOG_FORMAT"),
    ({}, {"SECRET_METADATA": "sometimes"}, "SECRET_METADATA"),
    ({}, {"DNS_CONFIG": "maybe"}, "DNS_CONFIG"),
    ({}, {"CLUSTER_NAME": "two words"}, "CLUSTER_NAME"),
    ({}, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, "CLUSTER_NAME"),
    ({"demo": True, "context": "prod"}, {}, "--demo"),
    ({}, {"PROBE_NAMESPACE": "Diagnostics"}, "PROBE_NAMESPACE"),
    ({}, {"PROBE_IMAGE": "probe image:1"}, "PROBE_IMAGE"),
    ({"probe_image": "ghcr.io/x/Probe"}, {}, "--probe-image"),
    ({}, {"MAX_CONCURRENT_PROBES": "0"}, "MAX_CONCURRENT_PROBES"),
    ({}, {"MAX_CONCURRENT_PROBES": "five"}, "MAX_CONCURRENT_PROBES"),
    ({}, {"AUTH_AUDIENCES": "netsight,,other"}, "AUTH_AUDIENCES"),
    ({}, {"MCP_RESPONSES": "xml"}, "MCP_RESPONSES"),
    ({}, {"TOOLSETS": "core,routes"}, "TOOLSETS"),
    ({"toolsets": ","}, {}, "--toolsets"),
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
    monkeypatch.delenv("TOOL_TIMEOUT")
    assert main(["serve", "--demo", "--toolsets", "core,dns"],
                stdout=io.StringIO()) == EXIT_TOOL_ERROR
    assert "--toolsets: unknown toolset 'dns'; valid toolsets: core, policy" in \
        capsys.readouterr().err


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


def test_namespace_names_the_namespaces_to_watch() -> None:
    assert load_settings({}, {}).namespaces is None
    assert load_settings({}, {"NAMESPACE": " shop, data ,shop"}).namespaces == ("data", "shop")
    assert load_settings({"namespaces": ["edge", "shop,data"]},
                         {"NAMESPACE": "other"}).namespaces == ("data", "edge", "shop")
    for bad in ("Shop", "shop,,a b", ",", "x" * 64):
        with pytest.raises(ConfigError, match="NAMESPACE: namespace names"):
            load_settings({}, {"NAMESPACE": bad})
    with pytest.raises(ConfigError, match="--namespaces: the demo watches"):
        load_settings({"demo": True, "namespaces": ["shop"]}, {})


def test_the_knowledge_base_is_a_path_a_postgresql_url_or_off() -> None:
    assert load_settings({}, {"KNOWLEDGE_DB": "/var/lib/netsight/kb.db"}).knowledge_db == \
        "/var/lib/netsight/kb.db"
    url = "postgresql://u:p@db:5432/netsight"
    assert load_settings({"knowledge_db": url}, {"KNOWLEDGE_DB": "off"}).knowledge_db == url
    assert load_settings({}, {"KNOWLEDGE_DB": "off"}).knowledge_db is None
    with pytest.raises(ConfigError, match="KNOWLEDGE_DB: a SQLite file path"):
        load_settings({}, {"KNOWLEDGE_DB": "mysql://db/x"})
