"""Reads of the knowledge store: an explanation for explain_finding, open occurrences at
start. Blocking; run on the knowledge base's reader thread.

A restricted caller's reads carry its namespaces: occurrences, fixes and notes elsewhere are
left out of every count and list (cluster-scoped ones, namespace ``""``, stay visible, as
the graph shows cluster-scoped objects to every caller).
"""

from __future__ import annotations

import json
from typing import Any

from netsight.analyzers.core.knowledge import Explanation, LearnedFix, Note, Occurrence, Query
from netsight.knowledge.database import Database

MAX_FIXES = 20
MAX_NOTES = 10


def _where(query: Query, table: str = "") -> tuple[str, list[Any]]:
    """The condition selecting ``query``'s rows (of ``table``, an alias, where given)."""
    of = f"{table}." if table else ""
    params: list[Any]
    if query.signature is not None:
        clause, params = f"{of}signature = ?", [query.signature]
    else:
        clause, params = f"{of}signature IN (SELECT signature FROM patterns WHERE code = ?)", \
            [query.code]
    if query.namespaces is not None:
        spaces = sorted(query.namespaces | {""})
        clause += f" AND {of}namespace IN ({', '.join('?' * len(spaces))})"
        params += spaces
    return clause, params


def explain(db: Database, query: Query) -> Explanation | None:
    if query.signature is not None:
        rows = db.query("SELECT code, pattern FROM patterns WHERE signature = ?",
                        (query.signature,))
        if not rows:
            return None
        code, pattern = rows[0]
    else:
        code, pattern = query.code, None
    # From the totals the writer keeps: a few rows per signature, whatever its history.
    where, params = _where(query)
    total, still_open, clusters, first, last = db.query(
        "SELECT sum(occurrences), sum(open_count), count(DISTINCT cluster), min(first_seen),"
        f" max(last_seen) FROM occurrence_totals WHERE {where}", params)[0]
    endings: dict[str, int] = {str(kind): int(count) for kind, count in db.query(
        f"SELECT kind, sum(count) FROM resolution_totals WHERE {where} GROUP BY kind", params)}
    fixes = tuple(
        LearnedFix(fix=fix, changes=tuple(json.loads(changes)), count=int(count),
                   last=float(at), clusters=int(spread))
        for fix, count, at, spread, changes in db.query(
            "SELECT fix, sum(count), max(last_at), count(DISTINCT cluster), min(changes)"
            f" FROM resolution_totals WHERE kind = 'fix' AND {where} GROUP BY fix"
            " ORDER BY sum(count) DESC, max(last_at) DESC", params)[:MAX_FIXES])
    notes = tuple(Note(text=text, author=author, at=float(at)) for text, author, at in db.query(
        f"SELECT text, author, at FROM notes WHERE {where} ORDER BY at DESC LIMIT {MAX_NOTES}",
        params))
    recent = tuple(
        Occurrence(object=obj, cluster=cluster, appeared=float(appeared),
                   last_seen=float(seen), resolved=None if resolved is None else float(resolved),
                   resolution=ending)
        for obj, cluster, appeared, seen, resolved, ending in _recent(db, query))
    return Explanation(
        signature=query.signature, code=code, pattern=pattern,
        first_seen=None if first is None else float(first),
        last_seen=None if last is None else float(last),
        occurrences=int(total or 0), open=int(still_open or 0), clusters=int(clusters),
        resolutions=int(endings.get("fix", 0)), coincidences=int(endings.get("coincidence", 0)),
        fixes=fixes, notes=notes, recent=recent)


def _recent(db: Database, query: Query) -> list[tuple[Any, ...]]:
    """The ``query.recent`` latest occurrences, newest first. By code, each signature's are
    read apart and merged: one ORDER BY over all of them would sort every occurrence."""
    if query.signature is not None:
        signatures = [query.signature]
    else:
        signatures = [str(row[0]) for row in db.query(
            "SELECT signature FROM patterns WHERE code = ?", (query.code,))]
    rows: list[tuple[Any, ...]] = []
    for signature in signatures:
        where, params = _where(Query(signature, None, query.namespaces, query.recent), "o")
        rows += db.query(
            "SELECT o.object, o.cluster, o.appeared, o.last_seen, o.resolved, r.kind"
            " FROM occurrences o LEFT JOIN resolutions r ON r.occurrence = o.id"
            f" WHERE {where} ORDER BY o.appeared DESC LIMIT {int(query.recent)}", params)
    if len(signatures) > 1:
        rows.sort(key=lambda row: float(row[2]), reverse=True)
    return rows[:int(query.recent)]


def open_occurrences(db: Database, cluster: str) -> dict[tuple[str, str], str]:
    """(signature, object) -> occurrence id, for the occurrences of ``cluster`` a previous
    process left open."""
    return {(signature, obj): oid for oid, signature, obj in db.query(
        "SELECT id, signature, object FROM occurrences WHERE cluster = ? AND resolved IS NULL",
        (cluster,))}


def pattern_of(db: Database, signature: str) -> tuple[str, str] | None:
    rows = db.query("SELECT code, pattern FROM patterns WHERE signature = ?", (signature,))
    return (str(rows[0][0]), str(rows[0][1])) if rows else None
