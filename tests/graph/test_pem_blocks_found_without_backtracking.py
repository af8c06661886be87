"""PEM blocks in Secret and ConfigMap data are found as ``-----BEGIN (L)-----(.*?)-----END
\\1-----`` finds them, without that pattern's backtracking: a caller's what-if proposal
(diff_routes ``proposed``, up to 1 MiB) full of BEGIN lines without END must not pin a core
for minutes (the pattern took 0.57 s CPU on 34 KB of them, growing with the square)."""

from __future__ import annotations

import base64
import re

import pytest

from netsight.graph.model.pem import ca_bundle_problem, pem_blocks, tls_data_problem

REFERENCE = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)
DER = base64.b64encode(b"\x30\x03\x02\x01\x01").decode()


@pytest.mark.parametrize("text", [
    "",
    f"-----BEGIN CERTIFICATE-----\n{DER}\n-----END CERTIFICATE-----\n",
    f"-----BEGIN CERTIFICATE-----{DER}-----END CERTIFICATE----------BEGIN EC PRIVATE KEY-----"
    f"{DER}-----END EC PRIVATE KEY-----",
    "-----BEGIN A-----x-----END B-----y-----END A-----",
    "-----BEGIN A-----x-----BEGIN B-----y-----END A-----z-----END B-----",
    "-----BEGIN X-----no end-----END A-----BEGIN B-----body-----END B-----",
    "-----BEGIN A----------END A-----",
    "----------BEGIN A-----x-----END A-------",
    "-----BEGIN A-----" * 50 + "-----END A-----",
    "-----BEGIN AB-----x-----END A-----y-----END AB-----",
])
def test_blocks_are_those_the_reference_pattern_finds(text: str) -> None:
    assert list(pem_blocks(text)) == [(m.group(1), m.group(2)) for m in REFERENCE.finditer(text)]


def test_a_mebibyte_of_unterminated_begin_lines_is_judged() -> None:
    flood = "-----BEGIN A-----" * (2**20 // 17)
    assert tls_data_problem(None, {"tls.crt": flood, "tls.key": flood}) == \
        "tls.crt does not hold a PEM CERTIFICATE block"
    assert ca_bundle_problem({"ca.crt": flood}, None) == \
        "ca.crt does not hold PEM CERTIFICATE blocks"
