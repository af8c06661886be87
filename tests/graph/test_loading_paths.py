"""Which inputs are read: ``-`` for stdin, files of any name, directories recursively
(``.yaml``, ``.yml`` and ``.json`` only); a missing path is an error."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from netsight.graph.ingest.manifests import load_manifests, manifest_files
from netsight.graph.store.live import GraphStore


def pod_yaml(name: str) -> str:
    return f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n"


def test_stdin_dash_reads_the_given_stream() -> None:
    store = GraphStore()

    report = load_manifests(store, ["-"], stdin=io.StringIO(pod_yaml("from-stdin")))

    assert set(store.state.graph) == {"Pod/default/from-stdin"}
    assert report.files == 1


def test_stdin_problems_are_located_in_stdin() -> None:
    store = GraphStore()

    load_manifests(store, ["-"], stdin=io.StringIO(pod_yaml("a") + "---\n17\n"))

    [problem] = store.problems.values()
    assert problem.location == "<stdin>:6"


def test_directories_are_read_recursively_for_manifest_suffixes(tmp_path: Path) -> None:
    (tmp_path / "nested" / "deeper").mkdir(parents=True)
    (tmp_path / "a.yaml").write_text(pod_yaml("a"))
    (tmp_path / "nested" / "b.yml").write_text(pod_yaml("b"))
    (tmp_path / "nested" / "deeper" / "c.json").write_text(
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c"}}')
    (tmp_path / "README.md").write_text(pod_yaml("readme"))
    (tmp_path / "nested" / "values.txt").write_text(pod_yaml("txt"))
    (tmp_path / "nested" / "chart.yaml.bak").write_text(pod_yaml("bak"))
    store = GraphStore()

    report = load_manifests(store, [str(tmp_path)])

    assert set(store.state.graph) == {"Pod/default/a", "Pod/default/b", "Pod/default/c"}
    assert report.files == 3
    assert store.problems == {}


def test_directory_listing_is_sorted_and_expands_only_directories(tmp_path: Path) -> None:
    (tmp_path / "z.yaml").write_text(pod_yaml("z"))
    (tmp_path / "a.yaml").write_text(pod_yaml("a"))
    explicit = tmp_path / "explicit.txt"
    explicit.write_text(pod_yaml("explicit"))

    files = manifest_files([str(tmp_path), str(explicit), "-"])

    assert files == [str(tmp_path / "a.yaml"), str(tmp_path / "z.yaml"), str(explicit), "-"]


def test_explicit_file_with_another_suffix_is_read(tmp_path: Path) -> None:
    path = tmp_path / "manifest.txt"
    path.write_text(pod_yaml("txt"))
    store = GraphStore()

    load_manifests(store, [str(path)])

    assert set(store.state.graph) == {"Pod/default/txt"}


def test_missing_path_raises_file_not_found(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(pod_yaml("ok"))
    missing = str(tmp_path / "nope.yaml")
    store = GraphStore()

    with pytest.raises(FileNotFoundError, match=r"nope\.yaml"):
        load_manifests(store, [str(tmp_path / "ok.yaml"), missing])
    # Paths are all checked before anything is loaded.
    assert store.state.graph.number_of_nodes() == 0
