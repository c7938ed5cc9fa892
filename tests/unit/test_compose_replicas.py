"""docker/compose.replicas.yaml shows the deployment of docs/operating.md.

Docker is not available where the suite runs, so the file is checked for what
the deployment depends on rather than started: two replicas of the same image
against the same Neo4j and the shared event log, each with a readiness
healthcheck, started only after the one-shot migration, and a load balancer
that waits for both and lists both as upstreams (with WebSockets passed
through for subscriptions).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

DOCKER = Path(__file__).resolve().parents[2] / "docker"
COMPOSE = DOCKER / "compose.replicas.yaml"
NGINX = DOCKER / "nginx.replicas.conf"
REPLICAS = ("memlattice-a", "memlattice-b")


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    compose = yaml.safe_load(COMPOSE.read_text())
    found: dict[str, Any] = compose["services"]
    return found


def _upstream_servers(conf: str) -> list[str]:
    block = re.search(r"upstream\s+memlattice\s*\{(?P<body>[^}]*)\}", conf)
    assert block, "nginx.replicas.conf has no `upstream memlattice` block"
    return re.findall(r"^\s*server\s+([\w.-]+:\d+)", block["body"], flags=re.MULTILINE)


def test_two_replicas_of_one_image_on_one_neo4j(services: dict[str, Any]) -> None:
    replicas = [name for name, s in services.items()
                if "serve" in (s.get("command") or [])]
    assert sorted(replicas) == list(REPLICAS)
    a, b = (services[name] for name in REPLICAS)
    assert a["build"] == b["build"] and a["image"] == b["image"]
    assert a["environment"]["NEO4J_URI"] == b["environment"]["NEO4J_URI"]
    assert a["environment"]["NEO4J_URI"].endswith("bolt://neo4j:7687}")
    for replica in (a, b):
        assert replica["environment"]["MEMLATTICE_EVENT_LOG"] == "neo4j"
        assert replica["environment"]["MEMLATTICE_AUTH_MODE"] == "keys"
        assert "ports" not in replica, "replicas are reached through the load balancer only"


def test_replicas_start_after_one_migration(services: dict[str, Any]) -> None:
    assert services["migrate"]["command"] == ["memlattice", "migrate"]
    for name in REPLICAS:
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully"
        assert depends["neo4j"]["condition"] == "service_healthy"


def test_every_long_running_service_has_a_healthcheck(services: dict[str, Any]) -> None:
    for name in ("neo4j", *REPLICAS, "lb"):
        check = services[name]["healthcheck"]
        assert check["test"] and not check.get("disable"), name
    for name in REPLICAS:
        assert "/readyz" in " ".join(services[name]["healthcheck"]["test"])


def test_the_load_balancer_fronts_both_replicas(services: dict[str, Any]) -> None:
    lb = services["lb"]
    assert lb["image"].startswith("nginx:")
    assert {name: d["condition"] for name, d in lb["depends_on"].items()} == {
        name: "service_healthy" for name in REPLICAS}
    assert lb["ports"] == ["127.0.0.1:8000:8080"]
    mounted = [v.split(":")[0] for v in lb["volumes"]]
    assert "./" + NGINX.name in mounted
    conf = NGINX.read_text()
    assert sorted(_upstream_servers(conf)) == [f"{name}:8000" for name in REPLICAS]
    assert re.search(r"listen\s+8080;", conf)
    assert "proxy_set_header Upgrade $http_upgrade;" in conf


def test_the_upstream_parser_sees_a_missing_replica() -> None:
    one = "upstream memlattice {\n    server memlattice-a:8000;\n}\n"
    assert _upstream_servers(one) == ["memlattice-a:8000"]
