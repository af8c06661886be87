"""The probe settings: off unless enabled, flags over the environment, a bad value naming
what to fix, and no probes for callers nobody authenticates."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.cli.main import build_parser
from netsight.server.config import ConfigError, ProbeMode, load_settings


def test_probes_are_off_unless_enabled() -> None:
    settings = load_settings({}, {})
    assert (settings.probes, settings.read_only, settings.probe_mode) == (False, False,
                                                                          ProbeMode.POD)
    assert (settings.probe_timeout, settings.probe_rate) == (30.0, 30.0)


def test_the_environment_enables_them_and_flags_win() -> None:
    env = {"PROBES": "true", "PROBE_MODE": "ephemeral", "PROBE_TIMEOUT": "45s",
           "PROBE_RATE": "12", "READ_ONLY": "true"}
    settings = load_settings({}, env)
    assert (settings.probes, settings.probe_mode, settings.probe_timeout, settings.probe_rate,
            settings.read_only) == (True, ProbeMode.EPHEMERAL, 45.0, 12.0, True)
    flags = vars(build_parser().parse_args(["serve", "--probes", "--probe-mode", "pod",
                                            "--probe-timeout", "1m", "--read-only"]))
    settings = load_settings(flags, {"PROBES": "false", "READ_ONLY": "false"})
    assert (settings.probes, settings.probe_mode, settings.probe_timeout,
            settings.read_only) == (True, ProbeMode.POD, 60.0, True)
    # Flags not given leave the environment's values.
    unset = vars(build_parser().parse_args(["serve"]))
    assert load_settings(unset, {"PROBES": "true"}).probes is True


@pytest.mark.parametrize(("env", "names"), [
    ({"PROBES": "maybe"}, "PROBES: true or false"),
    ({"PROBE_MODE": "exec"}, "PROBE_MODE: one of pod, ephemeral"),
    ({"PROBE_TIMEOUT": "soon"}, "PROBE_TIMEOUT: a positive duration"),
    ({"PROBE_RATE": "0"}, "PROBE_RATE: a whole number of at least 1"),
    ({"READ_ONLY": "yes please"}, "READ_ONLY: true or false"),
])
def test_a_bad_value_names_what_to_fix(env: dict[str, str], names: str) -> None:
    with pytest.raises(ConfigError, match=names):
        load_settings({}, env)


def test_probes_need_authenticated_callers_off_loopback() -> None:
    unchecked: dict[str, Any] = {"host": "0.0.0.0", "auth": "none", "insecure_no_auth": True}
    with pytest.raises(ConfigError, match="--probes: needs authenticated callers"):
        load_settings({**unchecked, "probes": True}, {})
    assert load_settings(unchecked, {}).probes is False
    assert load_settings({"auth": "none", "probes": True}, {}).probes is True  # loopback
