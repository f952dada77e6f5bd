"""The processes of the Kubernetes manifests run on a read-only root filesystem with only /tmp
writable, as the pods do (readOnlyRootFilesystem, an emptyDir on /tmp).

No container runtime runs here: a user and mount namespace (``unshare``) stands in for the pod.
The checkout (code, virtualenv, $HOME) is mounted read-only and /tmp is a fresh tmpfs; then the
migrations, gunicorn, Celery beat and a Celery worker start with the manifests' own arguments.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port
from tests.deploy.test_kubernetes import ALIVE_FILE, KUSTOMIZE, command, find, render

ROOT = Path(__file__).resolve().parents[2]


def namespaces_work() -> bool:
    if shutil.which("unshare") is None or shutil.which("kubectl") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt && true"], capture_output=True, check=False
    )
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(
    not namespaces_work(), reason="needs kubectl and unprivileged user and mount namespaces (unshare -rm)"
)


def test_web_beat_worker_and_migrations_need_only_tmp(redis_url: str) -> None:
    objects = render(KUSTOMIZE / "overlays" / "production")

    def main(name: str) -> dict[str, Any]:
        container: dict[str, Any] = find(objects, "Deployment", name)["spec"]["template"]["spec"][
            "containers"
        ][0]
        return container

    web_port = free_port()
    venv_bin = Path(sys.executable).parent
    web = command(main("studio-web")).replace("--bind=0.0.0.0:8000", f"--bind=127.0.0.1:{web_port}")
    beat = command(main("studio-scheduler"))
    worker = command(main("studio-worker")).replace("--concurrency=8", "--concurrency=2")
    migrate = command(find(objects, "Job", "studio-migrate")["spec"]["template"]["spec"]["containers"][0])
    probe = shlex.join(main("studio-worker")["livenessProbe"]["exec"]["command"])
    root = shlex.quote(str(ROOT))
    script = f"""
set -u
mount --bind {root} {root} && mount -o remount,bind,ro {root} || exit 3
mount -t tmpfs tmpfs /tmp || exit 3
cd {root}
touch .write-test 2>/dev/null && {{ echo "the checkout is writable"; exit 3; }}
export PATH={shlex.quote(str(venv_bin))}:$PATH HOME={root} PYTHONDONTWRITEBYTECODE=1
export DJANGO_SETTINGS_MODULE=config.settings DJANGO_DEBUG=0 DJANGO_SECRET_KEY=read-only-root-test
export DATABASE_URL=sqlite:////tmp/studio.sqlite3 REDIS_URL={shlex.quote(redis_url)}
export ALLOWED_HOSTS=studio.example.com STUDIO_WORKER_ALIVE_FILE={ALIVE_FILE}
{migrate} -v 0 > /tmp/migrate.log 2>&1 && echo MIGRATED
{web} > /tmp/web.log 2>&1 &
pids=$!
{beat} > /tmp/beat.log 2>&1 &
pids="$pids $!"
{worker} > /tmp/worker.log 2>&1 &
pids="$pids $!"
readyz() {{
  python -c "import urllib.request as u; print('READYZ', u.urlopen(u.Request('http://127.0.0.1:{web_port}/readyz', headers={{'Host': '10.0.0.7:8000'}}), timeout=3).status)"
}}
for _ in $(seq 1 240); do
  readyz >/dev/null 2>&1 && [ -f {ALIVE_FILE} ] && ls /tmp | grep -q celerybeat-schedule && break
  sleep 0.25
done
readyz
{probe} && echo WORKER-ALIVE
ls /tmp | grep -q celerybeat-schedule && echo BEAT-SCHEDULE
kill -TERM $pids
wait
grep -h -i -E "read-only file system|permission denied|Traceback" /tmp/*.log
true
"""
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=180, check=False
    )
    out = result.stdout
    assert result.returncode == 0, result.stdout + result.stderr
    for marker in ("MIGRATED", "READYZ 200", "WORKER-ALIVE", "BEAT-SCHEDULE"):
        assert marker in out, out + result.stderr
    assert "read-only" not in out.lower() and "Traceback" not in out, out
