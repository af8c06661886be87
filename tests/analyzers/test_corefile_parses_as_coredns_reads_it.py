"""The Corefile parser reads what CoreDNS's Caddyfile lexer and parser read (coredns/caddy
caddyfile/lexer.go, parse.go), and refuses what they refuse; what it cannot evaluate
(imports, snippets, environment placeholders) is said. Cluster DNS routes a name as CoreDNS
does: the longest matching zone's block, its rewrites, then its plugins in plugin.cfg order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netsight.analyzers.services.cluster_dns import (
    ClusterDNS,
    apply_rewrites,
    kubernetes_of,
    select_block,
)
from netsight.analyzers.services.corefile import CorefileError, parse, tokenize
from netsight.analyzers.services.dns import Resolver, name_problem, queries_for

KUBEADM = """\
.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
"""


def test_the_kubeadm_corefile_parses_into_its_plugins() -> None:
    corefile = parse(KUBEADM)
    (block,) = corefile.blocks
    assert [(k.zone, k.port, k.scheme) for k in block.keys] == [(".", 53, "dns")]
    assert [d.name for d in block.directives] == [
        "errors", "health", "ready", "kubernetes", "prometheus", "forward", "cache", "loop",
        "reload", "loadbalance"]
    (plugin,) = block.plugins("kubernetes")
    assert plugin.args == ("cluster.local", "in-addr.arpa", "ip6.arpa")
    assert plugin.line == 7
    options = kubernetes_of(plugin, block)
    assert options.zones == ("cluster.local.", "in-addr.arpa.", "ip6.arpa.")
    assert (options.pods, options.ttl) == ("insecure", 30)
    assert options.fallthrough == ("in-addr.arpa.", "ip6.arpa.")
    assert not options.falls_through("cart.shop.svc.cluster.local.")
    assert corefile.not_evaluated == ()


@pytest.mark.parametrize(("text", "tokens"), [
    ('a "b c" d', [("a", False), ("b c", True), ("d", False)]),
    # Only a quote is escaped; any other backslash stays.
    (r'"x\"y\z"', [('x"y\\z', True)]),
    # A comment runs to the line's end, even when it starts inside a token.
    ("a # b c\nd", [("a", False), ("d", False)]),
    ("ab#cd e\nf", [("ab", False), ("f", False)]),
    # Quotes open a token only at its start.
    ('a"b c"', [('a"b', False), ('c"', False)]),
    # An unclosed quote runs to the end of the file, as Caddy reads it.
    ('a "b c', [("a", False), ("b c", True)]),
    ("a\r\n  b", [("a", False), ("b", False)]),
])
def test_tokens_follow_the_caddyfile_lexer(text: str, tokens: list[tuple[str, bool]]) -> None:
    assert [(t.text, t.quoted) for t in tokenize(text)] == tokens


def test_tokens_carry_their_line() -> None:
    assert [(t.text, t.line) for t in tokenize('a\n"b\nc"\nd')] == [("a", 1), ("b\nc", 2),
                                                                      ("d", 4)]


def test_keys_may_be_comma_separated_and_span_lines_after_a_comma() -> None:
    corefile = parse("example.org:1053, dns://example.com,\n  tls://x.net {\n  whoami\n}\n")
    keys = corefile.blocks[0].keys
    assert [(k.zone, k.port, k.scheme) for k in keys] == [
        ("example.org.", 1053, "dns"), ("example.com.", None, "dns"), ("x.net.", None, "tls")]


def test_several_blocks_and_a_block_without_braces() -> None:
    corefile = parse(KUBEADM + "acme.internal {\n  forward . 10.0.0.1\n}\n")
    assert [b.keys[0].zone for b in corefile.blocks] == [".", "acme.internal."]
    lone = parse(".\nwhoami\nlog\n")
    assert [d.name for d in lone.blocks[0].directives] == ["whoami", "log"]


def test_a_directive_block_may_sit_on_one_line() -> None:
    (block,) = parse(".:53 {\n forward . 1.1.1.1 { policy sequential }\n}\n").blocks
    (forward,) = block.plugins("forward")
    assert forward.args == (".", "1.1.1.1")
    assert [(o.name, o.args) for o in forward.block or ()] == [("policy", ("sequential",))]


@pytest.mark.parametrize(("text", "message"), [
    (".:53 {\n  errors\n", "line 2: a block is not closed with '}'"),
    (".:53 {\n  errors\n}\n}\n", "line 4: unexpected '}'"),
    (".:53 {\n  forward . 1.1.1.1\n  {\n  }\n}\n", "line 3: unexpected '{'"),
    ("a, {\n}\n", "line 1: a server block key is missing after ','"),
    (".:99999 {\n}\n", "line 1: server block key .:99999: port 99999 is out of range"),
])
def test_what_coredns_refuses_does_not_parse(text: str, message: str) -> None:
    with pytest.raises(CorefileError) as refused:
        parse(text)
    assert str(refused.value) == message


def test_imports_snippets_and_placeholders_are_said_not_evaluated() -> None:
    corefile = parse("(common) {\n  log\n}\n.:53 {\n  import common\n  forward . {$UP}\n}\n")
    assert corefile.not_evaluated == (
        "line 1: snippet (common) (snippets and import are not evaluated)",
        "line 5: import common (imported files and snippets are not evaluated)",
        "line 6: forward: environment placeholder {$UP} (CoreDNS's environment is not known)")
    (block,) = corefile.blocks
    assert block.plugins("forward")[0].placeholders == ("{$UP}",)


def test_the_longest_matching_zone_takes_a_name() -> None:
    blocks = list(parse(KUBEADM + "svc.cluster.local {\n forward . 10.0.0.1\n}\n"
                        "example.org:5353 {\n forward . 10.0.0.2\n}\n").blocks)
    assert select_block(blocks, "cart.shop.svc.cluster.local.") is blocks[1]
    assert select_block(blocks, "cluster.local.") is blocks[0]
    # Pods query port 53: a block on another port takes nothing of theirs.
    assert select_block(blocks, "www.example.org.") is blocks[0]


@pytest.mark.parametrize(("rule", "name", "rewritten"), [
    ("rewrite name a.example.com b.example.com", "a.example.com.", "b.example.com."),
    ("rewrite name exact A.Example.com. b.example.com", "a.example.com.", "b.example.com."),
    ("rewrite name suffix .old.internal .shop.svc.cluster.local", "cart.old.internal.",
     "cart.shop.svc.cluster.local."),
    ("rewrite name prefix legacy- ", "legacy-cart.x.", None),  # FROM TO missing: not read
    ("rewrite name substring old new", "cart.old.internal.", "cart.new.internal."),
    (r"rewrite name regex (.*)\.db\.internal\.$ {1}.data.svc.cluster.local",
     "pg.db.internal.", "pg.data.svc.cluster.local."),
    ("rewrite continue name exact a.x b.x", "a.x.", "b.x."),
    ("rewrite type ANY HINFO", "a.x.", "a.x."),
    ("rewrite name exact other.x b.x", "a.x.", "a.x."),
])
def test_name_rewrites_follow_coredns(rule: str, name: str, rewritten: str | None) -> None:
    (block,) = parse(f".:53 {{\n  {rule}\n  forward . 10.0.0.1\n}}\n").blocks
    result, applied, why = apply_rewrites(block, name)
    if rewritten is None:
        assert why is not None
        assert "lacks FROM TO" in why
        return
    assert why is None
    assert result == rewritten
    assert bool(applied) == (rewritten != name)


def test_a_stop_rule_ends_the_rewrites_and_continue_goes_on() -> None:
    text = ".:53 {\n rewrite continue name exact a.x b.x\n rewrite name exact b.x c.x\n" \
           " rewrite name exact c.x d.x\n forward . 10.0.0.1\n}\n"
    (block,) = parse(text).blocks
    assert apply_rewrites(block, "a.x.")[0] == "c.x."


def test_plugins_run_in_coredns_order_not_corefile_order() -> None:
    # forward is listed first, but kubernetes comes before it in plugin.cfg.
    corefile = parse(".:53 {\n forward . 10.0.0.1\n kubernetes cluster.local\n}\n")
    dns = ClusterDNS("test", "cluster.local", False, None, corefile, list(corefile.blocks))
    assert dns.route("cart.shop.svc.cluster.local.").plugin == "kubernetes"
    assert dns.route("example.org.").plugin == "forward"
    assert dns.route("cart.shop.svc.cluster.local.", past_kubernetes=True).plugin == "forward"


@pytest.mark.parametrize(("name", "ndots", "searches", "queries"), [
    ("cart", 5, ["shop.svc.cluster.local", "svc.cluster.local"],
     ["cart.shop.svc.cluster.local.", "cart.svc.cluster.local.", "cart."]),
    # As many dots as ndots: as written first, then the search domains.
    ("a.b", 1, ["x.local"], ["a.b.", "a.b.x.local."]),
    ("a.b", 2, ["x.local"], ["a.b.x.local.", "a.b."]),
    ("a.b.", 5, ["x.local"], ["a.b."]),
])
def test_the_resolver_walks_the_search_path_as_glibc_does(
        name: str, ndots: int, searches: list[str], queries: list[str]) -> None:
    resolver = Resolver("ClusterFirst", True, ["10.96.0.10"], searches, ndots)
    assert queries_for(name, resolver) == queries


@pytest.mark.parametrize(("name", "problem"), [
    ("cart", None), ("_http._tcp.cart.shop", None), ("a.b.", None), ("Cart.Shop", None),
    ("a..b", "it has an empty label ('..', or a leading dot)"),
    ("-a.b", "label '-a' holds characters other than letters, digits and '-', or starts "
     "or ends with '-'"),
    ("a_b.c", "label 'a_b' holds characters other than letters, digits and '-', or starts "
     "or ends with '-'"),
    (".", "it is empty"),
    ("a" * 64, f"label {'a' * 20}... is 64 characters long (at most 63)"),
    (".".join(["a" * 60] * 5), "it is 304 characters long (at most 253)"),
])
def test_names_are_checked_against_rfc_1123(name: str, problem: str | None) -> None:
    assert name_problem(name) == problem


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([
    *'.:{}"#\\$%,\n \t', "ab", "53", "forward", "rewrite", "name", "regex", "kubernetes",
    "import", "{$X}", "(s)", "cache", "0", "pods"]), max_size=40).map("".join))
def test_any_text_parses_or_is_refused_with_a_line(text: str) -> None:
    """A Corefile is a cluster object anyone with edit rights writes: whatever it holds,
    reading it answers or says where it stops, and routing over what parses never fails."""
    try:
        corefile = parse(text)
    except CorefileError as refused:
        line = refused.line
    else:
        line = 0
    if line:
        assert 1 <= line <= text.count("\n") + 1
        return
    dns = ClusterDNS("test", "cluster.local", False, None, corefile, list(corefile.blocks))
    for name in ("cart.shop.svc.cluster.local.", "example.org.", "ab."):
        dns.route(name)
