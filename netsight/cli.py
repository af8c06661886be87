"""The ``netsight`` command.

``netsight call TOOL --manifests PATH`` answers one question offline, from manifest files,
printing exactly the structured result the MCP tool returns. ``netsight tools`` lists the
tools with their input schemas. Exit status: 0 on an answer, 2 on a tool error (printed
as the ToolError JSON), 1 on a bug.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

import orjson

from netsight.analyzers.core.calling import answer, find, to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.core.declarations import Toolset
from netsight.analyzers.core.rendering import render_error, render_text
from netsight.analyzers.tools import TOOLS
from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store.live import GraphStore, Source

EXIT_TOOL_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="netsight",
        description="Answers Kubernetes networking questions from a graph of the cluster.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    call = sub.add_parser("call", help="run one tool on manifests and print its result")
    call.add_argument("tool", help="tool name; see 'netsight tools'")
    call.add_argument("--manifests", "-f", action="append", default=[], metavar="PATH",
                      help="file, directory (recursive) or - for stdin; repeatable")
    call.add_argument("--args", default="{}", metavar="JSON",
                      help="the tool's arguments as a JSON object")
    call.add_argument("--detail", action="store_true",
                      help="add detail, suggestion and evidence to findings")
    call.add_argument("--output", "-o", choices=("json", "text"), default="json")
    call.add_argument("--cluster-name", default=os.environ.get("CLUSTER_NAME", "local"),
                      help="name reported in metadata (env CLUSTER_NAME)")

    tools = sub.add_parser("tools", help="list tools with their input schemas")
    tools.add_argument("--output", "-o", choices=("json", "text"), default="json")

    sim = sub.add_parser("sim", help="run the simulated Kubernetes API server")
    sim.add_argument("--scale", default="demo",
                     help="'demo' (small, with deliberate faults) or a pod count: 2500, 10k, "
                          "100k")
    sim.add_argument("--seed", type=int, default=1)
    sim.add_argument("--host", default="127.0.0.1")
    sim.add_argument("--port", type=int, default=8001)
    sim.add_argument("--kubeconfig", metavar="PATH",
                     help="write a kubeconfig for this server (kubectl, netsight serve)")
    sim.add_argument("--bookmark-interval", type=float, default=60.0)
    sim.add_argument("--control-token-file", metavar="PATH",
                     help="write the bearer token of the /sim/ control endpoints here "
                          "(readable by you only); it is printed otherwise")

    serve = sub.add_parser(
        "serve", help="serve MCP (Streamable HTTP at /mcp, or stdio) and the graph API",
        description="Keeps a live graph of the cluster and answers over MCP and HTTP. "
                    "Environment: CLUSTER_NAME, PORT, HOST, LOG_LEVEL, TOOL_TIMEOUT, "
                    "AUTH_MODE, TOOLSETS; "
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
    serve.add_argument("--toolsets", metavar="LIST",
                       help="offer only these groups of tools, comma-separated: "
                       f"{', '.join(Toolset)} (env TOOLSETS; default all)")
    probes = serve.add_argument_group(
        "diagnostic probes", "configured and validated at start, but not run yet: netsight "
        "creates no probe pods so far")
    probes.add_argument("--probe-namespace",
                        help="namespace of probe pods (env PROBE_NAMESPACE; default "
                             "mcp-diagnostics)")
    probes.add_argument("--probe-image", help="probe container image (env PROBE_IMAGE)")
    probes.add_argument("--max-concurrent-probes",
                        help="probe pods at once (env MAX_CONCURRENT_PROBES; default 5)")
    return parser


def main(argv: Sequence[str] | None = None, *, stdin: IO[str] | None = None,
         stdout: IO[str] | None = None) -> int:
    out = stdout or sys.stdout
    args = _parser().parse_args(argv)
    if args.command == "tools":
        return _tools(args.output, out)
    if args.command == "sim":
        return _sim(args, out)
    if args.command == "serve":
        return _serve(args)
    try:
        data = _call(args, stdin)
    except ToolFailure as failure:
        error = failure.to_error(args.tool).model_dump(mode="json")
        _emit(error, args.output, out, render_error)
        return EXIT_TOOL_ERROR
    _emit(data, args.output, out, render_text)
    return 0


def _call(args: argparse.Namespace, stdin: IO[str] | None) -> dict[str, Any]:
    tool = find(TOOLS, args.tool)
    try:
        raw_args = orjson.loads(args.args)
    except orjson.JSONDecodeError as exc:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"--args: not valid JSON ({exc})",
                          tool=tool.name) from None
    if not isinstance(raw_args, dict):
        raise ToolFailure(ErrorCode.INVALID_INPUT,
                          "--args: must be a JSON object, e.g. '{\"service\": \"shop/cart\"}'",
                          tool=tool.name)
    if args.detail:
        raw_args["detail"] = True
    if not args.manifests:
        raise ToolFailure(ErrorCode.INVALID_INPUT,
                          "--manifests: give at least one file or directory to analyze",
                          tool=tool.name)
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
    from netsight.sim.scenarios import parse_scale, synthetic

    try:
        objects = [] if args.scale == "demo" else synthetic(parse_scale(args.scale), args.seed)
    except ValueError as exc:
        out.write(f"netsight sim: --scale: {exc}\n")
        return EXIT_TOOL_ERROR

    async def serve() -> None:
        server = SimServer(host=args.host, port=args.port,
                           config=SimConfig(bookmark_interval=args.bookmark_interval))
        started = time.perf_counter()
        if args.scale == "demo":  # its EndpointSlices come from the controller it starts
            load_demo(server.state, args.seed)
        server.state.apply(objects)
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


def _serve(args: argparse.Namespace) -> int:
    from netsight.server.config import ConfigError, load_settings
    from netsight.server.running import run

    try:
        return run(load_settings(vars(args)))
    except ConfigError as exc:
        sys.stderr.write(f"netsight serve: {exc}\n")
        return EXIT_TOOL_ERROR


def _emit(data: dict[str, Any], output: str, out: IO[str], text: Any) -> None:
    if output == "json":
        out.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write(text(data) + "\n")


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
