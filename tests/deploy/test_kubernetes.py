"""deploy/kubernetes: every overlay renders with kustomize, every object is valid Kubernetes, and the
objects say what the docs say (security contexts, probes, one scheduler, migrations, egress).

No cluster API server runs here: the manifests are rendered and validated against the Kubernetes
API schemas (the ``kubernetes-validate`` package ships them, so this works offline), not applied.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dockerfile
import pytest
import yaml
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parents[2]
KUSTOMIZE = ROOT / "deploy" / "kubernetes"
OVERLAYS = ("dev", "production")
# The oldest Kubernetes release the manifests are written for (everything they use is GA there:
# policy/v1, autoscaling/v2, Pod Security admission, Job TTLs) and the newest the package knows.
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")
STEP_SERVICES_LABEL = {"inference-graph-studio/step-services": "true"}
ALIVE_FILE = "/tmp/studio-worker-alive"
WORKLOADS = ("Deployment", "StatefulSet", "Job")

pytestmark = pytest.mark.skipif(
    shutil.which("kubectl") is None,
    reason="kubectl is not installed (apt-get install kubectl, or .ci/run installs it)",
)


def render(path: Path) -> list[dict[str, Any]]:
    result = subprocess.run(
        ["kubectl", "kustomize", str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict[str, Any]]]:
    return {name: render(KUSTOMIZE / "overlays" / name) for name in OVERLAYS}


@pytest.fixture(params=OVERLAYS)
def objects(
    request: pytest.FixtureRequest, rendered: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    return rendered[request.param]


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind}/{name}: {len(matches)} found"
    return matches[0]


def pod_specs(objects: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    for obj in objects:
        if obj["kind"] in WORKLOADS:
            yield f"{obj['kind']}/{obj['metadata']['name']}", obj["spec"]["template"]["spec"]


def containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*pod.get("initContainers", []), *pod["containers"]]


def studio_image(container: dict[str, Any]) -> bool:
    return "inference-graph-studio" in container["image"]


def command(container: dict[str, Any]) -> str:
    return " ".join([*container.get("command", []), *container.get("args", [])])


def image_user() -> int:
    """The studio image's user: the Dockerfile's last stage, what the manifests run."""
    return dockerfile.user(list(dockerfile.stages().values())[-1])[0]


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


# ---- rendering and schemas -------------------------------------------------------------------


def test_the_base_and_every_overlay_render() -> None:
    assert {p.name for p in (KUSTOMIZE / "overlays").iterdir()} == set(OVERLAYS)
    assert render(KUSTOMIZE / "base")


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_object_is_valid_against_the_kubernetes_schemas(
    rendered: dict[str, list[dict[str, Any]]], version: str
) -> None:
    import kubernetes_validate

    for name, objects in rendered.items():
        for obj in objects:
            # strict: a misspelt or misplaced field is an error, not silently dropped by the API server
            kubernetes_validate.validate(obj, version, strict=True)
        assert objects, name


def test_the_validator_rejects_a_broken_object() -> None:
    """The check above can fail: a misplaced field and a wrong type are both caught, offline."""
    import kubernetes_validate

    broken = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "x"},
        "spec": {"replicas": "two", "selector": {}, "template": {"spec": {"containers": []}}},
    }
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSIONS[0], strict=True)


# ---- pods: security, resources ---------------------------------------------------------------


def test_every_pod_and_container_runs_restricted(objects: list[dict[str, Any]]) -> None:
    """The "restricted" Pod Security Standard, and more: a read-only root filesystem everywhere."""
    namespace = find(objects, "Namespace", "inference-graph-studio")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    seen = 0
    for where, pod in pod_specs(objects):
        seen += 1
        assert pod["automountServiceAccountToken"] is False, where
        context = pod["securityContext"]
        assert context["runAsNonRoot"] is True, where
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}, where
        for container in containers(pod):
            at = f"{where} {container['name']}"
            c = container["securityContext"]
            assert c["runAsNonRoot"] is True, at
            assert isinstance(c["runAsUser"], int) and c["runAsUser"] > 0, at
            assert c["allowPrivilegeEscalation"] is False, at
            assert c["readOnlyRootFilesystem"] is True, at
            assert c["capabilities"] == {"drop": ["ALL"]}, at
            assert c["seccompProfile"] == {"type": "RuntimeDefault"}, at
            for kind in ("requests", "limits"):
                assert set(container["resources"][kind]) >= {"cpu", "memory"}, f"{at} {kind}"
            if studio_image(container):
                assert c["runAsUser"] == context["runAsUser"] == image_user(), at
                mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
                volumes = {v["name"]: v for v in pod["volumes"]}
                assert "emptyDir" in volumes[mounts["/tmp"]], f"{at}: /tmp is a writable emptyDir"
    assert seen >= 4


def test_the_studio_pods_use_a_service_account_without_a_token(objects: list[dict[str, Any]]) -> None:
    account = find(objects, "ServiceAccount", "studio")
    assert account["automountServiceAccountToken"] is False
    for where, pod in pod_specs(objects):
        if any(studio_image(c) for c in pod["containers"]):
            assert pod["serviceAccountName"] == "studio", where


# ---- what runs where -------------------------------------------------------------------------


def test_web_runs_gunicorn_with_probes_on_the_health_endpoints(objects: list[dict[str, Any]]) -> None:
    from django.conf import settings

    pod = find(objects, "Deployment", "studio-web")["spec"]["template"]["spec"]
    (web,) = pod["containers"]
    text = command(web)
    assert text.startswith("gunicorn config.wsgi:application")
    threads = re.search(r"--threads=(\d+)", text)
    assert threads is not None and int(threads.group(1)) > settings.RUN_SSE_MAX_STREAMS
    assert "--no-control-socket" in text, "gunicorn's control socket would be written under $HOME"
    port = {p["name"]: p["containerPort"] for p in web["ports"]}["http"]
    assert f"--bind=0.0.0.0:{port}" in text
    assert web["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert web["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert web["startupProbe"]["httpGet"]["path"] == "/healthz"
    # The probe's own timeout must not fire before /readyz answers its 503.
    assert web["readinessProbe"]["timeoutSeconds"] > settings.HEALTH_CHECK_TIMEOUT


def test_workers_run_the_threads_pool_with_a_liveness_file(objects: list[dict[str, Any]]) -> None:
    pod = find(objects, "Deployment", "studio-worker")["spec"]["template"]["spec"]
    (worker,) = pod["containers"]
    assert command(worker).startswith("celery --app=config.celery_app worker --pool=threads")
    assert "ports" not in worker, "workers take no traffic"
    env = {e["name"]: e.get("value") for e in worker["env"]}
    assert env["STUDIO_WORKER_ALIVE_FILE"] == ALIVE_FILE
    for probe in ("startupProbe", "livenessProbe"):
        assert ALIVE_FILE in " ".join(worker[probe]["exec"]["command"]), probe
    hpa = find(objects, "HorizontalPodAutoscaler", "studio-worker")
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "studio-worker",
    }
    assert 1 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]


def test_the_worker_liveness_probe_passes_on_a_fresh_file_only(
    rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """The probe's own shell command, run here against a fresh, an old and a missing file."""
    import os

    worker = find(rendered["production"], "Deployment", "studio-worker")["spec"]["template"]["spec"]
    probe = worker["containers"][0]["livenessProbe"]["exec"]["command"]
    alive = tmp_path / "alive"

    def probe_passes() -> bool:
        argv = [part.replace(ALIVE_FILE, str(alive)) for part in probe]
        return subprocess.run(argv, capture_output=True, timeout=10, check=False).returncode == 0

    assert not probe_passes(), "no file: not alive"
    alive.touch()
    assert probe_passes()
    old = time.time() - 61
    os.utime(alive, (old, old))
    assert not probe_passes(), "a file a minute old: the consumer stopped"


def test_exactly_one_scheduler_replaced_with_recreate(objects: list[dict[str, Any]]) -> None:
    schedulers = [
        (obj, c)
        for obj in objects
        if obj["kind"] in WORKLOADS
        for c in containers(obj["spec"]["template"]["spec"])
        if re.search(r"(^| )beat( |$)|--beat| -B( |$)", command(c))
    ]
    assert len(schedulers) == 1, [o["metadata"]["name"] for o, _ in schedulers]
    deployment, beat = schedulers[0]
    assert deployment["kind"] == "Deployment" and deployment["metadata"]["name"] == "studio-scheduler"
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert command(beat).startswith("celery --app=config.celery_app beat")
    assert "--schedule=/tmp/" in command(beat), "the schedule file goes to the writable /tmp"
    scaled = {o["spec"]["scaleTargetRef"]["name"] for o in objects if o["kind"] == "HorizontalPodAutoscaler"}
    assert "studio-scheduler" not in scaled


def test_migrations_run_once_in_a_job_and_the_pods_wait_for_them(objects: list[dict[str, Any]]) -> None:
    job = find(objects, "Job", "studio-migrate")
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert job["spec"]["backoffLimit"] >= 1
    assert command(pod["containers"][0]) == "python manage.py migrate --noinput"
    for where, spec in pod_specs(objects):
        for container in containers(spec):
            text = command(container)
            if "migrate" in text and where != "Job/studio-migrate":
                assert "migrate --check" in text, f"{where} {container['name']} would apply migrations"
    for name in ("studio-web", "studio-worker"):
        spec = find(objects, "Deployment", name)["spec"]["template"]["spec"]
        assert any("migrate --check" in command(c) for c in spec.get("initContainers", [])), name


def test_management_commands_in_the_manifests_exist(objects: list[dict[str, Any]]) -> None:
    known = get_commands()
    for where, pod in pod_specs(objects):
        for container in containers(pod):
            for used in re.findall(r"manage\.py (\w+)", command(container)):
                assert used in known, f"{where} runs manage.py {used}, which does not exist"


def test_every_setting_the_manifests_set_is_read_by_the_settings(objects: list[dict[str, Any]]) -> None:
    settings_py = (ROOT / "config" / "settings.py").read_text()
    names: set[str] = set()
    for obj in objects:
        if obj["kind"] == "ConfigMap" and obj["metadata"]["name"].startswith("studio-config"):
            names |= set(obj["data"])
    for _, pod in pod_specs(objects):
        for container in containers(pod):
            if studio_image(container):
                names |= {e["name"] for e in container.get("env", [])}
    assert {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_DEBUG"} <= names
    for name in names:
        assert f'"{name}"' in settings_py, f"{name} is set but config/settings.py never reads it"


def test_every_pod_given_the_secret_key_may_be_given_the_encryption_keys(
    objects: list[dict[str, Any]],
) -> None:
    """Deploy targets' credentials are encrypted with STUDIO_ENCRYPTION_KEYS (else a key derived
    from DJANGO_SECRET_KEY): whoever reads one reads the other, from the same Secret, optional."""
    for where, pod in pod_specs(objects):
        for container in containers(pod):
            refs = {
                e["name"]: e["valueFrom"]["secretKeyRef"]
                for e in container.get("env", [])
                if "secretKeyRef" in e.get("valueFrom", {})
            }
            if "DJANGO_SECRET_KEY" in refs:  # the dev overlay's Secret name has a hash suffix
                assert refs.get("STUDIO_ENCRYPTION_KEYS") == {
                    "name": refs["DJANGO_SECRET_KEY"]["name"],
                    "key": "STUDIO_ENCRYPTION_KEYS",
                    "optional": True,
                }, f"{where} {container['name']}"


def test_services_ingress_and_budget_select_what_exists(objects: list[dict[str, Any]]) -> None:
    pods = [
        (obj["spec"]["template"]["metadata"]["labels"], obj["spec"]["template"]["spec"])
        for obj in objects
        if obj["kind"] in ("Deployment", "StatefulSet")
    ]
    services = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Service"}
    for name, service in services.items():
        selected = [spec for labels, spec in pods if matches(service["spec"]["selector"], labels)]
        assert selected, f"Service {name} selects no pod"
        ports = {p["name"] for spec in selected for c in spec["containers"] for p in c.get("ports", [])}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in ports, f"Service {name}: no container port {port['targetPort']}"
    ingress = find(objects, "Ingress", "studio-web")
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            assert backend["port"]["name"] in {p["name"] for p in services[backend["name"]]["spec"]["ports"]}
    budget = find(objects, "PodDisruptionBudget", "studio-web")
    web_labels = find(objects, "Deployment", "studio-web")["spec"]["template"]["metadata"]["labels"]
    assert matches(budget["spec"]["selector"]["matchLabels"], web_labels)
    assert budget["spec"]["maxUnavailable"] == 1


# ---- the worker's network policy ------------------------------------------------------------


def egress(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    policy = find(objects, "NetworkPolicy", "studio-worker")
    worker_labels = find(objects, "Deployment", "studio-worker")["spec"]["template"]["metadata"]["labels"]
    assert matches(policy["spec"]["podSelector"]["matchLabels"], worker_labels)
    assert sorted(policy["spec"]["policyTypes"]) == ["Egress", "Ingress"]
    assert policy["spec"].get("ingress", []) == [], "nothing connects to a worker"
    return list(policy["spec"]["egress"])


def rule_for_port(rules: list[dict[str, Any]], port: int) -> dict[str, Any]:
    (rule,) = [r for r in rules if any(p.get("port") == port for p in r.get("ports", []))]
    return rule


def test_workers_reach_only_dns_the_database_redis_and_labelled_namespaces(
    objects: list[dict[str, Any]],
) -> None:
    rules = egress(objects)
    assert len(rules) == 4, "DNS, the database, Redis, the step services: nothing else"
    dns = rule_for_port(rules, 53)
    assert sorted(p["protocol"] for p in dns["ports"]) == ["TCP", "UDP"]
    assert dns["to"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ]
    for port in (5432, 6379):
        rule = rule_for_port(rules, port)
        assert rule["ports"] == [{"protocol": "TCP", "port": port}]
        for peer in rule["to"]:
            assert "namespaceSelector" not in peer, f"port {port} only to the database or Redis itself"
            if "ipBlock" in peer:
                assert "/" in peer["ipBlock"]["cidr"] and "except" not in peer["ipBlock"]
    (steps,) = [r for r in rules if "ports" not in r]
    assert steps["to"] == [{"namespaceSelector": {"matchLabels": STEP_SERVICES_LABEL}}]


def test_in_dev_the_database_and_redis_rules_select_their_pods(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    objects = rendered["dev"]
    rules = egress(objects)
    postgres = find(objects, "StatefulSet", "studio-postgresql")["spec"]["template"]["metadata"]["labels"]
    redis = find(objects, "Deployment", "studio-redis")["spec"]["template"]["metadata"]["labels"]
    assert matches(rule_for_port(rules, 5432)["to"][0]["podSelector"]["matchLabels"], postgres)
    assert matches(rule_for_port(rules, 6379)["to"][0]["podSelector"]["matchLabels"], redis)
    # and the URLs the dev Secret gives point at those Services and ports
    secret = next(
        o for o in objects if o["kind"] == "Secret" and o["metadata"]["name"].startswith("studio-secrets")
    )
    import base64

    values = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert "@studio-postgresql:5432/" in values["DATABASE_URL"]
    assert values["REDIS_URL"].startswith("redis://studio-redis:6379/")


def test_the_docs_name_the_egress_the_policy_allows() -> None:
    readme = (ROOT / "README.md").read_text()
    for words in ("inference-graph-studio/step-services=true", "53", "5432", "6379"):
        assert words in readme, words


# ---- production -----------------------------------------------------------------------------


def test_production_brings_no_database_and_no_secret(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["production"]
    assert not [o for o in objects if o["kind"] in ("Secret", "StatefulSet", "PersistentVolumeClaim")]
    assert {o["metadata"]["name"] for o in objects if o["kind"] == "Deployment"} == {
        "studio-web",
        "studio-worker",
        "studio-scheduler",
    }
    wanted = {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY"}
    for where, pod in pod_specs(objects):
        for container in containers(pod):
            refs = {
                e["name"]: e["valueFrom"]["secretKeyRef"]
                for e in container.get("env", [])
                if "secretKeyRef" in e.get("valueFrom", {})
            }
            assert wanted <= set(refs), f"{where} {container['name']}"
            for name in wanted:
                assert refs[name] == {"name": "studio-secrets", "key": name}
    config = next(o for o in objects if o["kind"] == "ConfigMap")
    assert config["data"]["DJANGO_DEBUG"] == "0"
    assert not {"DJANGO_SECURE_SSL_REDIRECT", "DJANGO_SECURE_COOKIES"} & set(config["data"]), (
        "HTTPS defaults stay"
    )
    ingress = find(objects, "Ingress", "studio-web")
    assert ingress["spec"]["tls"][0]["hosts"] == [ingress["spec"]["rules"][0]["host"]]
    assert ingress["spec"]["rules"][0]["host"] in config["data"]["ALLOWED_HOSTS"].split(",")


def test_the_image_writes_nothing_outside_tmp_at_run_time() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "collectstatic" in dockerfile and "compileall" in dockerfile
    assert "PYTHONDONTWRITEBYTECODE=1" in dockerfile
    assert "--no-control-socket" in dockerfile
