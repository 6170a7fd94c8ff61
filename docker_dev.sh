#!/usr/bin/env bash
# Start a development shell in a container: the repo mounted at /src, the host's Docker
# socket mounted so the harness inside can start sibling sandboxes on the host engine.
# Usage: ./docker_dev.sh [command...]   (default: bash)
set -euo pipefail
cd "$(dirname "$0")"
repo="$(pwd)"

if ! docker info >/dev/null 2>&1; then
  echo "docker_dev.sh: Docker engine not reachable; start it: dockerd >/var/log/dockerd.log 2>&1 &" >&2
  exit 3
fi
# Build (or reuse) the content-addressed env-python image and take its tag.
tag="$(python3 -m harness.images.dev_tag env-python)"

ca_args=()
for ca in "${SSL_CERT_FILE:-}" "${PIP_CERT:-}" "${REQUESTS_CA_BUNDLE:-}" /etc/ssl/certs/ca-certificates.crt; do
  if [ -n "$ca" ] && [ -f "$ca" ]; then
    ca_args=(-v "$ca:/etc/harness-host-ca.crt:ro" -e PIP_CERT=/etc/harness-host-ca.crt
             -e SSL_CERT_FILE=/etc/harness-host-ca.crt -e NODE_EXTRA_CA_CERTS=/etc/harness-host-ca.crt)
    break
  fi
done
# The harness's Python dependencies (read from pyproject.toml) go into the throwaway
# container, not into /src; set HARNESS_DEV_NOINSTALL=1 to skip this step.
setup='if [ -z "${HARNESS_DEV_NOINSTALL:-}" ]; then
  python3 -c "import tomllib; p = tomllib.load(open(\"pyproject.toml\", \"rb\"))[\"project\"]; print(\"\\n\".join(p[\"dependencies\"] + p[\"optional-dependencies\"][\"dev\"]))" > /tmp/harness-deps.txt &&
  with-host-ca pip install -q --no-cache-dir --break-system-packages -r /tmp/harness-deps.txt >&2
fi
exec "$@"'
tty_args=(-i)
[ -t 0 ] && [ -t 1 ] && tty_args=(-it)
[ "$#" -gt 0 ] || set -- bash

exec docker run --rm "${tty_args[@]}" \
  --name "harness-dev-$$" \
  --label harness.dev=1 \
  -v "$repo:/src" -w /src \
  -v /var/run/docker.sock:/var/run/docker.sock \
  -e HARNESS_DEV=1 -e PYTHONPATH=/src -e PIP_ROOT_USER_ACTION=ignore -e HARNESS_DEV_NOINSTALL="${HARNESS_DEV_NOINSTALL:-}" \
  "${ca_args[@]}" \
  "$tag" sh -c "$setup" sh "$@"
