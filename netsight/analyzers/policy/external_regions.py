"""Peers outside the cluster: the address space cut at every CIDR boundary a policy names.

Inside one piece every ipBlock answers alike, so one address stands for it; the pieces with
the same answer are written back as a CIDR with ``except``, the way ipBlocks are written.
"""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from netsight.analyzers.policy.endpoints import Endpoint, external
from netsight.analyzers.policy.peers import IPBlock, Network
from netsight.analyzers.policy.reach import Tally
from netsight.analyzers.policy.verdict import Verdict


@dataclass
class Region:
    """Addresses of one family with the same answer: sorted, disjoint [first, last] pieces."""

    version: int
    pieces: list[tuple[int, int]]
    tally: Tally


def external_regions(blocks: tuple[IPBlock, ...],
                     evaluate: Callable[[Endpoint], Iterable[tuple[Verdict, int]]]
                     ) -> list[Region]:
    """The address space cut at every CIDR boundary the blocks name; each piece evaluated
    once (one address stands for it: every block contains all of a piece or none of it),
    pieces with the same answer gathered into one region."""
    regions: list[Region] = []
    for version, bits in ((4, 32), (6, 128)):
        points = {0, 2 ** bits}
        for block in blocks:
            for net in (block.cidr, *block.excepts):
                if net.version == version:
                    points.add(int(net.network_address))
                    points.add(int(net.broadcast_address) + 1)
        edges = sorted(points)
        by_answer: dict[tuple[int, int, int], Region] = {}
        for start, stop in itertools.pairwise(edges):
            address = str(ipaddress.IPv4Address(start) if version == 4
                          else ipaddress.IPv6Address(start))
            result = Tally()
            for verdict, count in evaluate(external(address)):
                result.add(verdict, count)
            answer = (result.allowed, result.denied, result.unknown)
            region = by_answer.get(answer)
            if region is None:
                region = by_answer[answer] = Region(version, [], result)
                regions.append(region)
            else:
                region.tally.reasons.update(result.reasons)
            if region.pieces and region.pieces[-1][1] + 1 == start:
                region.pieces[-1] = (region.pieces[-1][0], stop - 1)
            else:
                region.pieces.append((start, stop - 1))
    return regions


def describe_region(region: Region, blocks: tuple[IPBlock, ...]) -> tuple[str, list[str]]:
    """(CIDR, except CIDRs), the way ipBlocks are written: the smallest network a policy
    names (or the whole family) that holds the region, and the addresses in it that are
    not part of the region."""
    make: Callable[[int], ipaddress.IPv4Address | ipaddress.IPv6Address] = \
        ipaddress.IPv4Address if region.version == 4 else ipaddress.IPv6Address
    first, last = region.pieces[0][0], region.pieces[-1][1]
    whole: Network = ipaddress.ip_network("0.0.0.0/0" if region.version == 4 else "::/0")
    exact = list(ipaddress.summarize_address_range(make(first), make(last)))
    candidates: list[Network] = [whole, *(n for b in blocks for n in (b.cidr, *b.excepts)
                           if n.version == region.version)]
    if len(exact) == 1:
        candidates.append(ipaddress.ip_network(str(exact[0])))
    cover = min((n for n in candidates
                 if int(n.network_address) <= first and int(n.broadcast_address) >= last),
                key=lambda n: n.num_addresses)
    gaps: list[tuple[int, int]] = []
    position = int(cover.network_address)
    for start, stop in region.pieces:
        if start > position:
            gaps.append((position, start - 1))
        position = stop + 1
    if position <= int(cover.broadcast_address):
        gaps.append((position, int(cover.broadcast_address)))
    excepts = [str(n) for start, stop in gaps
               for n in ipaddress.summarize_address_range(make(start), make(stop))]
    return str(cover), excepts


def within(address: str, cidr: str, excepts: Iterable[str]) -> bool:
    """Whether ``address`` is in ``cidr`` and none of ``excepts`` (for tests and clients)."""
    ip = ipaddress.ip_address(address)
    net = ipaddress.ip_network(cidr)
    return ip.version == net.version and ip in net and not any(
        ip.version == e.version and ip in e for e in map(ipaddress.ip_network, excepts))
