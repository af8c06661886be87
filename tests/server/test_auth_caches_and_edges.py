"""The review caches keep answers for their lifetime and no longer, share one lookup among
concurrent callers, never keep failures; the middleware turns away WebSockets and reads only
well-formed bearer headers."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any

import pytest

from netsight.server.auth import AuthMiddleware, Guard, Memo, Reviews, bearer_token
from netsight.server.auth import middleware as auth_middleware
from netsight.server.config import Auth, Settings

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Lookups:
    def __init__(self, answer: Any = True, fail: bool = False, delay: float = 0.0) -> None:
        self.calls, self.answer, self.fail, self.delay = 0, answer, fail, delay

    async def __call__(self) -> Any:
        self.calls += 1
        await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("review failed")
        return self.answer


async def test_an_answer_is_kept_for_its_lifetime_only() -> None:
    clock = Clock()
    memo: Memo[str, bool] = Memo(30.0, clock=clock)
    lookup = Lookups()
    assert await memo.get("k", lookup) is True
    clock.now = 29.9
    assert await memo.get("k", lookup) is True
    assert memo.peek("k") is True
    assert lookup.calls == 1
    clock.now = 30.1
    assert memo.peek("k") is None
    assert await memo.get("k", lookup) is True
    assert lookup.calls == 2


async def test_concurrent_lookups_share_one_call_and_survive_a_cancelled_waiter() -> None:
    memo: Memo[str, bool] = Memo(30.0)
    lookup = Lookups(delay=0.05)
    first = asyncio.ensure_future(memo.get("k", lookup))
    await asyncio.sleep(0)
    first.cancel()  # the request that started the review went away
    answers = await asyncio.gather(*(memo.get("k", lookup) for _ in range(5)))
    assert answers == [True] * 5
    assert lookup.calls == 1


async def test_failures_and_refused_answers_are_not_kept() -> None:
    memo: Memo[str, bool | None] = Memo(30.0, keep=lambda answer: answer is not None)
    failing = Lookups(fail=True)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            await memo.get("k", failing)
    assert failing.calls == 2
    rejected = Lookups(answer=None)
    assert await memo.get("j", rejected) is None
    assert await memo.get("j", rejected) is None
    assert rejected.calls == 2
    assert len(memo) == 0


async def test_the_oldest_answer_goes_first_when_full() -> None:
    memo: Memo[int, bool] = Memo(30.0, limit=3)
    for key in range(4):
        await memo.get(key, Lookups())
    assert len(memo) == 3
    assert memo.peek(0) is None
    assert memo.peek(3) is True


class NoApi:
    async def request(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no review may be made")


async def test_websockets_are_closed_unchecked() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("reached the app")

    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    guard = Guard(Reviews(NoApi()))
    await AuthMiddleware(app, guard=guard)({"type": "websocket", "path": "/mcp",
                                            "headers": []}, receive, send)
    assert sent[0]["type"] == "websocket.close"
    assert sent[0]["code"] == 1008


def test_only_well_formed_bearer_headers_carry_a_token() -> None:
    assert bearer_token("Bearer abc") == "abc"
    assert bearer_token("bearer  abc ") == "abc"
    for header in (None, "", "Bearer", "Bearer   ", "Basic abc", "abc"):
        assert bearer_token(header) is None, header


def test_no_middleware_where_callers_are_not_checked() -> None:
    assert auth_middleware(Settings(cluster_name="c"), NoApi()) == []
    assert auth_middleware(Settings(cluster_name="c", auth=Auth.TOKENREVIEW), NoApi())
    with pytest.raises(RuntimeError, match="API server"):
        auth_middleware(Settings(cluster_name="c", host="0.0.0.0"), None)


async def test_a_call_without_a_grant_is_refused_where_callers_are_checked() -> None:
    """If a tool call ever reaches netsight past the auth middleware (a transport or SDK
    path it does not see), it is refused, not answered from the whole graph."""
    import json

    from netsight.analyzers.tools import TOOLS
    from netsight.graph.store.live import GraphStore
    from netsight.server.mcp_tools import ToolHost, run_tool

    store = GraphStore()
    store.apply("ADDED", {"apiVersion": "v1", "kind": "Service",
                          "metadata": {"name": "web", "namespace": "x"}, "spec": {}})
    checked = ToolHost(store=store, tools=TOOLS, timeout=5.0, scoped=True)
    refused = await run_tool(checked, "list_services", {}, request=None)
    assert refused.is_error
    assert json.loads(refused.content[0].text)["code"] == "AUTH_FAILED"  # type: ignore[union-attr]
    open_host = ToolHost(store=store, tools=TOOLS, timeout=5.0)
    answered = await run_tool(open_host, "list_services", {}, request=None)
    assert not answered.is_error


async def test_token_reviews_in_flight_are_bounded() -> None:
    """Refused tokens are not kept, so a flood of bad tokens is bounded another way: no more
    than REVIEW_CONCURRENCY TokenReviews at a time."""
    from netsight.server.auth import REVIEW_CONCURRENCY

    class Counting:
        def __init__(self) -> None:
            self.now = self.most = 0

        async def token(self, token: str) -> None:
            self.now += 1
            self.most = max(self.most, self.now)
            await asyncio.sleep(0.01)
            self.now -= 1

    reviews = Counting()
    guard = Guard(reviews)  # type: ignore[arg-type]
    answers = await asyncio.gather(*(guard.authenticate(f"bad-{i}") for i in range(100)))
    assert answers == [None] * 100
    assert reviews.most == REVIEW_CONCURRENCY
