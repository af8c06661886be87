"""The chart's knowledge-base settings: SQLite on an emptyDir (NOTES warns) or on a claim,
PostgreSQL by URL, or off — each reaching netsight as the KNOWLEDGE_DB it reads."""

from __future__ import annotations

from typing import Any

from netsight.server.config import load_settings
from tests.deploy.conftest import CHART, Render, only, run_helm


def knowledge(objects: list[dict[str, Any]]) -> tuple[str | None, dict[str, Any] | None]:
    spec = only(objects, "Deployment")["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    db = load_settings({}, {"CLUSTER_NAME": "c", **env}).knowledge_db
    volume = next((v for v in spec["volumes"] if v["name"] == "knowledge"), None)
    mounted = any(m["name"] == "knowledge" for m in container["volumeMounts"])
    assert mounted == (volume is not None)
    return db, volume


def test_sqlite_on_an_empty_dir_by_default_on_a_claim_when_asked(render: Render) -> None:
    db, volume = knowledge(render("default-values.yaml"))
    assert db == "/var/lib/netsight/knowledge.db"
    assert volume is not None
    assert "emptyDir" in volume
    assert not [o for o in render("default-values.yaml") if o["kind"] == "PersistentVolumeClaim"]
    objects = render("full-values.yaml")
    db, volume = knowledge(objects)
    claim = only(objects, "PersistentVolumeClaim")
    assert volume == {"name": "knowledge",
                      "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}}
    assert claim["spec"]["resources"]["requests"]["storage"] == "2Gi"
    existing = render("full-values.yaml", "knowledge.persistence.existingClaim=kept")
    assert knowledge(existing)[1] == {"name": "knowledge",
                                      "persistentVolumeClaim": {"claimName": "kept"}}
    assert not [o for o in existing if o["kind"] == "PersistentVolumeClaim"]


def test_postgresql_by_url_or_off(render: Render) -> None:
    url = "postgresql://netsight@db.example:5432/netsight"
    assert knowledge(render("default-values.yaml", f"knowledge.url={url}")) == (url, None)
    assert knowledge(render("default-values.yaml", "knowledge.enabled=false")) == (None, None)


def test_notes_warn_that_an_empty_dir_loses_the_history(helm: Any) -> None:
    def notes(*sets: str) -> str:
        args = ["install", "ns", str(CHART), "--dry-run", "--namespace", "netsight",
                "-f", str(CHART / "ci" / "default-values.yaml")]
        for item in sets:
            args += ["--set", item]
        done = run_helm(helm, *args)
        assert done.returncode == 0, done.stderr
        return done.stdout.partition("NOTES:")[2]

    assert "history is lost" in notes()
    assert "history is lost" not in notes("knowledge.persistence.enabled=true")
    assert "own (SQLite)" in notes("replicas=2")
