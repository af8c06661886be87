"""The ``netsight`` command.

``netsight call TOOL`` answers one question and prints exactly the structured result the MCP
tool returns: from the current kubeconfig context (``--kubeconfig``, ``--context``), from a
running netsight (``--server``) or offline from manifest files (``--manifests``). ``netsight
tools`` lists the tools with their input schemas; ``netsight bench`` runs the benchmark suite of
a source checkout. Exit status: ``command_line.EXIT_STATUS``.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import IO, Any

import orjson
import shtab

from netsight.analyzers.core.calling import AnyTool, answer, to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.core.declarations import Toolset
from netsight.analyzers.tools import TOOLS
from netsight.cli.command_line import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_STATUS,
    EXIT_TOOL_ERROR,
    Formatter,
    Parser,
)
from netsight.cli.printing import FAIL_ON, OUTPUTS, fails, print_answer, print_error
from netsight.cli.tool_flags import add_tool_flags, tool_arguments
from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store.live import GraphStore, Source

CALL_EXAMPLES = """\
examples:
  netsight call diagnose_service --service shop/cart               # current kubeconfig context
  netsight call find_blocking_policies --source shop/a --destination data/b --port 5432
  netsight call analyze_config -n shop --fail-on critical -o text
  netsight call list_services --server http://127.0.0.1:8080 --token "$TOKEN"
  netsight call analyze_config -f manifests/ --args '{"minSeverity": "warning"}'
"""


def _version() -> str:
    try:
        return metadata.version("netsight")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _call_options() -> Parser:
    """The options of every ``netsight call TOOL``, beside the tool's own flags."""
    common = Parser(add_help=False)
    source = common.add_argument_group(
        "where the answer comes from",
        "default: the current context of the kubeconfig, the kinds the tool reads listed once")
    manifests = source.add_argument(
        "--manifests", "-f", action="append", default=[], metavar="PATH",
        help="offline: a file, directory (recursive) or - for stdin; repeatable")
    kubeconfig = source.add_argument(
        "--kubeconfig", metavar="PATH", help="default: $KUBECONFIG or ~/.kube/config")
    source.add_argument("--context", help="kubeconfig context; default the current one")
    # Not --namespace(s): those are tools' own arguments (analyze_config, reachability_matrix).
    source.add_argument("--watch-namespaces", action="append", metavar="LIST",
                        help="on a cluster: list only these namespaces' objects (and the "
                             "cluster-scoped ones RBAC lets you read), comma-separated, as "
                             "netsight serve's NAMESPACE does")
    source.add_argument("--server", metavar="URL",
                        help="a running netsight (netsight serve): its MCP endpoint, or its "
                             "base URL, to which /mcp is added")
    source.add_argument("--token", default=os.environ.get("NETSIGHT_TOKEN"),
                        help="bearer token for --server (env NETSIGHT_TOKEN)")
    source.add_argument("--cluster-name", default=os.environ.get("CLUSTER_NAME", "local"),
                        help="name reported in metadata, offline or from a kubeconfig "
                             "(env CLUSTER_NAME)")
    manifests.complete = shtab.FILE  # type: ignore[attr-defined]
    kubeconfig.complete = shtab.FILE  # type: ignore[attr-defined]
    answer = common.add_argument_group("the answer")
    answer.add_argument("--args", default="{}", metavar="JSON",
                        help="the tool's arguments as a JSON object; flags win over it")
    answer.add_argument("--output", "-o", choices=OUTPUTS, default="json",
                        help="json (default: the structured result), yaml, or text for people")
    answer.add_argument("--fail-on", choices=FAIL_ON,
                        help=f"exit {EXIT_FINDINGS} when the answer holds a finding this "
                             "severe or worse (for CI)")
    return common


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="netsight", formatter_class=Formatter, epilog=EXIT_STATUS,
        description="Answers Kubernetes networking questions from a graph of the cluster.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}",
                        help="print netsight's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                title="commands", help="the command to run")

    call = sub.add_parser(
        "call", help="run one tool and print its result", formatter_class=Formatter,
        description=textwrap.fill(
            "Runs one tool on the current kubeconfig context, a running netsight or "
            "manifest files, and prints the structured result the MCP tool returns. Each "
            "tool takes its arguments as flags: netsight call TOOL --help.", 78),
        epilog=CALL_EXAMPLES + "\n" + EXIT_STATUS)
    common = _call_options()
    reserved = {s for action in common._actions for s in action.option_strings}
    reserved |= {"-h", "--help"}
    tools = call.add_subparsers(dest="tool", required=True, metavar="TOOL", title="tools",
                                help="the tool to run (netsight tools: their schemas)")
    for tool in callable_tools().values():
        summary = tool.description.split(". ")[0].rstrip(".")
        tool_parser = tools.add_parser(
            tool.name, parents=[common], help=summary,
            description=textwrap.fill(tool.description, 78),
            formatter_class=Formatter, epilog=EXIT_STATUS)
        arguments = tool_parser.add_argument_group(
            f"{tool.name} arguments", "each also accepted in --args")
        add_tool_flags(arguments, tool.input_schema(), reserved)

    listing = sub.add_parser("tools", help="list tools with their input schemas",
                             description="Lists the tools netsight answers with, with their "
                                         "descriptions and input schemas.")
    listing.add_argument("--output", "-o", choices=("json", "text"), default="json",
                         help="json (default) or text: one line of parameters per tool")

    completion = sub.add_parser(
        "completion", help="print a shell completion script",
        description="Prints a completion script for commands, tools and their flags. "
                    "bash: source <(netsight completion bash); zsh: netsight completion zsh "
                    "> \"${fpath[1]}/_netsight\".")
    completion.add_argument("shell", choices=shtab.SUPPORTED_SHELLS,
                            help="the shell to complete in")

    sim = sub.add_parser("sim", help="run the simulated Kubernetes API server",
                         description="Runs the simulated Kubernetes API server, loaded with "
                                     "the demo cluster or a synthetic one, for netsight, "
                                     "kubectl and tests.")
    sim.add_argument("--scale", default="demo",
                     help="'demo' (small, with deliberate faults) or a pod count: 2500, 10k, "
                          "100k")
    sim.add_argument("--seed", type=int, default=1,
                     help="seed of the generated objects: one seed, one cluster (default 1)")
    sim.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    sim.add_argument("--port", type=int, default=8001,
                     help="listen port (default 8001; 0: any free)")
    sim.add_argument("--kubeconfig", metavar="PATH",
                     help="write a kubeconfig for this server (kubectl, netsight serve)")
    sim.add_argument("--bookmark-interval", type=float, default=60.0, metavar="SECONDS",
                     help="how often open watches get a BOOKMARK event (default 60)")
    sim.add_argument("--control-token-file", metavar="PATH",
                     help="write the bearer token of the /sim/ control endpoints here "
                          "(readable by you only); it is printed otherwise")

    bench = sub.add_parser(
        "bench", help="run the benchmark suite (from a source checkout)", add_help=False,
        description="Runs the benchmark suite, python -m benchmarks, of this source checkout "
                    "(an installed package has none). Its options: netsight bench --help.")
    bench.add_argument("options", nargs=argparse.REMAINDER,
                       help="--scale S|M|L|XL|PODS, --out DIR, --only PHASES, --seed N, --quick")

    serve = sub.add_parser(
        "serve", help="serve MCP (Streamable HTTP at /mcp, or stdio) and the graph API",
        description="Keeps a live graph of the cluster and answers over MCP and HTTP. "
                    "Environment: CLUSTER_NAME, PORT, HOST, LOG_LEVEL, TOOL_TIMEOUT, "
                    "AUTH_MODE, TOOLSETS, NAMESPACE, KNOWLEDGE_DB; "
                    "flags win over variables.")
    serve.add_argument("--kubeconfig", metavar="PATH",
                       help="default: in-cluster config inside a pod, else $KUBECONFIG or "
                            "~/.kube/config")
    serve.add_argument("--context", help="kubeconfig context; default the current one")
    serve.add_argument("--demo", action="store_true",
                       help="run the simulated API server with the demo cluster in-process, "
                            "with gentle churn (a rollout about every 30 s)")
    serve.add_argument("--demo-static", action="store_true",
                       help="the demo cluster without churn: it changes only when you change "
                            "it (for tests)")
    serve.add_argument("--host", help="listen address (env HOST; default 127.0.0.1)")
    serve.add_argument("--port", help="listen port (env PORT; default 8080; 0: any free)")
    serve.add_argument("--transport", choices=("http", "stdio"),
                       help="http (default) or stdio, for clients that launch the server")
    serve.add_argument("--cluster-name", help="name reported in metadata (env CLUSTER_NAME)")
    serve.add_argument("--log-level", help="debug, info, warn or error (env LOG_LEVEL)")
    serve.add_argument("--log-format", choices=("text", "json"),
                       help="log lines as text (default) or one JSON object a line, with "
                            "trace ids (env LOG_FORMAT)")
    serve.add_argument("--tool-timeout", help="per-call timeout such as 10s (env TOOL_TIMEOUT)")
    serve.add_argument("--responses", choices=("json", "sse"),
                       help="how /mcp answers a POST: one JSON body (default) or an SSE stream "
                            "(env MCP_RESPONSES); clients accept both")
    serve.add_argument("--auth", choices=("auto", "tokenreview", "none"),
                       help="bearer tokens checked with TokenReview: auto (default) off "
                            "loopback, tokenreview always, none never (env AUTH_MODE)")
    serve.add_argument("--insecure-no-auth", action="store_true",
                       help="allow --auth none on a non-loopback address")
    serve.add_argument("--auth-audience", action="append", metavar="AUDIENCE",
                       help="accept only tokens issued for this audience (repeatable; env "
                            "AUTH_AUDIENCES, comma-separated); default: the API server's own")
    serve.add_argument("--namespaces", "--namespace", action="append", metavar="LIST",
                       help="watch only these namespaces, comma-separated or repeated, with "
                            "a Role in each instead of cluster-wide reads (env NAMESPACE; "
                            "default the whole cluster)")
    serve.add_argument("--toolsets", metavar="LIST",
                       help="offer only these groups of tools, comma-separated: "
                       f"{', '.join(Toolset)} (env TOOLSETS; default all but notes and "
                       "providers)")
    serve.add_argument("--read-only", action="store_true", default=None,
                       help="hide every tool that writes to the cluster (the probes), "
                            "whatever else is enabled (env READ_ONLY)")
    serve.add_argument("--knowledge-db", metavar="PATH|URL",
                       help="record findings and learned fixes (explain_finding) in this SQLite "
                            "file or postgresql:// database (env KNOWLEDGE_DB; default off)")
    serve.add_argument("--dns-config", action="store_const", const=True, default=None,
                       help="watch the cluster DNS ConfigMaps (kube-system/coredns, kube-dns), "
                            "by name, for check_dns_resolution (env DNS_CONFIG; default off)")
    serve.add_argument("--provider-status", action="store_const", const=True, default=None,
                       help="watch the providers' controllers and agents, Nodes and Istio's "
                            "webhooks, for check_provider_status and the CNI detection (env "
                            "PROVIDER_STATUS; default off, on with --demo)")
    probes = serve.add_argument_group(
        "diagnostic probes", "pods netsight creates to check a verdict against the data "
        "plane; off unless --probes is given")
    probes.add_argument("--probes", action="store_true", default=None,
                        help="offer check_connectivity and probe_http (env PROBES=true)")
    probes.add_argument("--probe-namespace",
                        help="namespace of probes without a source pod (env PROBE_NAMESPACE; "
                             "default mcp-diagnostics)")
    probes.add_argument("--probe-image", help="probe container image (env PROBE_IMAGE)")
    probes.add_argument("--max-concurrent-probes",
                        help="probe pods at once (env MAX_CONCURRENT_PROBES; default 5)")
    probes.add_argument("--probe-mode", choices=("pod", "ephemeral"),
                        help="pod (default): a pod of its own with the source's labels; "
                             "ephemeral: a container in the source pod (env PROBE_MODE)")
    probes.add_argument("--probe-timeout",
                        help="how long a probe may take, pod start included, such as 30s "
                             "(env PROBE_TIMEOUT)")
    probes.add_argument("--probe-rate",
                        help="probes one caller may start a minute (env PROBE_RATE; "
                             "default 30)")
    return parser


def main(argv: Sequence[str] | None = None, *, stdin: IO[str] | None = None,
         stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["bench"]:  # every option is the suite's own, --help included
        return _bench(given[1:], err)
    parser = build_parser()
    args = parser.parse_args(argv)  # SystemExit: --help, --version, a usage error (EXIT_USAGE)
    if args.command == "tools":
        return _tools(args.output, out)
    if args.command == "completion":
        out.write(shtab.complete(parser, shell=args.shell))
        return EXIT_OK
    if args.command == "sim":
        return _sim(args, out)
    if args.command == "serve":
        return _serve(args)
    if args.manifests and (args.server or args.kubeconfig or args.context):
        parser.error("--manifests reads files only: leave out --server, --kubeconfig and "
                     "--context")
    if args.server and (args.kubeconfig or args.context):
        parser.error("--server answers from the server's own cluster: leave out "
                     "--kubeconfig and --context")
    if args.watch_namespaces and (args.server or args.manifests):
        parser.error("--watch-namespaces limits what is listed from a cluster: leave out "
                     "--server and --manifests")
    try:
        data = _call(args, stdin, err)
    except ToolFailure as failure:
        print_error(failure.to_error(args.tool).model_dump(mode="json"), args.output, out)
        return EXIT_TOOL_ERROR
    print_answer(data, args.output, out)
    return EXIT_FINDINGS if args.fail_on and fails(data, args.fail_on) else EXIT_OK


def callable_tools() -> dict[str, AnyTool]:
    """The catalog, and the probe tools a server started with --probes runs (--server)."""
    from netsight.server.probe_tools import probe_tools

    return {**TOOLS, **probe_tools(None)}


def _call(args: argparse.Namespace, stdin: IO[str] | None, err: IO[str]) -> dict[str, Any]:
    tool = callable_tools()[args.tool]
    try:
        raw_args = orjson.loads(args.args)
    except orjson.JSONDecodeError as exc:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"--args: not valid JSON ({exc})",
                          tool=tool.name) from None
    if not isinstance(raw_args, dict):
        raise ToolFailure(ErrorCode.INVALID_INPUT,
                          "--args: must be a JSON object, e.g. '{\"service\": \"shop/cart\"}'",
                          tool=tool.name)
    raw_args.update(tool_arguments(args))
    if args.server:
        from netsight.cli.server_call import answer_from_server

        return answer_from_server(args.server, args.token, tool.name, raw_args)
    if tool.name not in TOOLS:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"{tool.name} runs a probe pod: give "
                          "--server URL of a netsight serve started with --probes",
                          tool=tool.name)
    if not args.manifests:
        from netsight.cli.cluster_call import answer_from_cluster

        namespaces = None
        if args.watch_namespaces:
            from netsight.server.config import ConfigError, parse_namespaces

            try:
                namespaces = parse_namespaces(("--watch-namespaces", args.watch_namespaces))
            except ConfigError as exc:
                raise ToolFailure(ErrorCode.INVALID_INPUT, str(exc), tool=tool.name) from None
        return answer_from_cluster(tool, raw_args, kubeconfig=args.kubeconfig,
                                   context=args.context, cluster_name=args.cluster_name,
                                   err=err, namespaces=namespaces)
    store = GraphStore(source=Source.MANIFESTS, cluster_name=args.cluster_name)
    try:
        load_manifests(store, args.manifests, stdin=stdin)
    except FileNotFoundError as exc:
        raise ToolFailure(ErrorCode.INVALID_INPUT,
                          f"--manifests: no such file or directory: {exc.args[0]}",
                          tool=tool.name) from None
    result = answer(tool, store.view(), raw_args)
    return to_json(result, detail=raw_args.get("detail") is True)


def _tools(output: str, out: IO[str]) -> int:
    listing: list[dict[str, Any]] = [
        {"name": tool.name, "description": tool.description, "readOnly": tool.read_only,
         "inputSchema": tool.input_schema()}
        for tool in TOOLS.values()
    ]
    if output == "json":
        out.write(orjson.dumps(listing, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        for tool in listing:
            params = ", ".join(tool["inputSchema"].get("properties", {}))
            out.write(f"{tool['name']}({params})\n    {tool['description']}\n")
    return 0


def _sim(args: argparse.Namespace, out: IO[str]) -> int:
    import asyncio
    import time
    from pathlib import Path

    from netsight.sim.apiserver import SimConfig, SimServer, loop_factory
    from netsight.sim.demo import load_demo
    from netsight.sim.kubelet import KubeletConfig
    from netsight.sim.scenarios import parse_scale, synthetic

    try:
        objects = [] if args.scale == "demo" else synthetic(parse_scale(args.scale), args.seed)
    except ValueError as exc:
        out.write(f"netsight sim: --scale: {exc}\n")
        return EXIT_TOOL_ERROR

    async def serve() -> None:
        # The kubelet acts only on pods created through the API (probe pods among them).
        server = SimServer(host=args.host, port=args.port,
                           config=SimConfig(bookmark_interval=args.bookmark_interval),
                           kubelet=KubeletConfig())
        started = time.perf_counter()
        if args.scale == "demo":  # its EndpointSlices come from the controller it starts
            load_demo(server.state, args.seed)
        # The generated objects are the simulator's to keep: no copy of each, no list kept.
        server.state.apply(objects, owned=True)
        objects.clear()
        count = sum(len(store) for store in server.state.objects.values())
        server.state.compact()  # nobody watches from before the load: drop its events
        await server.start()
        if args.kubeconfig:
            server.write_kubeconfig(Path(args.kubeconfig))
        token = server.control_token or ""
        if args.control_token_file:
            # Created private before the token is in it: other local users must not read it.
            path = Path(args.control_token_file)
            path.touch(mode=0o600)
            path.chmod(0o600)
            path.write_text(token + "\n")
            control = f"control token in {path}"
        else:
            control = f"control token {token}"
        out.write(f"netsight sim: {count} objects at {server.url} "
                  f"(loaded in {time.perf_counter() - started:.1f}s)"
                  + (f"; kubeconfig {args.kubeconfig}" if args.kubeconfig else "")
                  + f"; {control} (Authorization: Bearer, for /sim/)\n")
        out.flush()
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    with contextlib.suppress(KeyboardInterrupt), \
            asyncio.Runner(loop_factory=loop_factory()) as runner:  # Ctrl-C stops the server
        runner.run(serve())
    return 0


def _bench(options: list[str], err: IO[str]) -> int:
    """``python -m benchmarks`` of the checkout this netsight was imported from."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "benchmarks" / "__main__.py").is_file():
        err.write("netsight bench: the benchmark suite lives in netsight's source tree "
                  f"(benchmarks/), not in the installed package ({root} has none): run it "
                  "from a clone of the repository\n")
        return EXIT_TOOL_ERROR
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "benchmarks", *options], cwd=root,
                          env={**os.environ, "PYTHONPATH": path}, check=False)
    return done.returncode


def _serve(args: argparse.Namespace) -> int:
    from netsight.server.config import ConfigError, load_settings
    from netsight.server.running import run

    try:
        return run(load_settings(vars(args)))
    except ConfigError as exc:
        sys.stderr.write(f"netsight serve: {exc}\n")
        return EXIT_TOOL_ERROR


def console() -> None:
    """The ``netsight`` script: :func:`main`, then an exit that skips tearing the heap down.

    Tearing the interpreter down frees every object one by one: nothing for ``netsight call``,
    but seconds for a large cluster's graph (``netsight serve``), spent after the server has
    drained, out of the pod's termination grace period. So, as Instagram's servers do, a clean
    return runs what a normal exit would run — the exit handlers (logging's, OpenTelemetry's,
    multiprocessing's) and a flush of the standard streams — and ends the process with
    ``os._exit``. An exception, or a thread still running, takes the normal exit instead.
    """
    try:
        status = main()
    except KeyboardInterrupt:
        status = 130
    if any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()
           if thread is not threading.main_thread()):
        sys.exit(status)  # the interpreter joins them first
    atexit._run_exitfuncs()  # private, but unchanged since Python 2: the handlers, last first
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed or broken pipe: nothing left to save
            stream.flush()
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    console()
