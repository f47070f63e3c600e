#!/usr/bin/env bash
# Creates .venv with Python 3.10 and the locked stack in requirements.txt, once.
# Re-running is cheap: it reinstalls only when requirements.txt has changed.
# Why Python 3.10: see DEVELOPERS.md.
#
#   bash setup.sh           what running the pipeline needs
#   bash setup.sh --tests   and Debian's chromium, for the test that
#                                   opens the run report in a real browser
set -euo pipefail
cd "$(dirname "$0")"

if [ "${1:-}" = "--tests" ] && ! command -v chromium >/dev/null 2>&1; then
  echo "setup: installing Debian's chromium (the run report's browser test)" >&2
  as_root=""
  [ "$(id -u)" = 0 ] || as_root=sudo
  $as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq chromium >/dev/null
fi

find_python() {
  local candidates=(python3.10)
  if command -v pyenv >/dev/null 2>&1; then
    candidates+=("$(pyenv root)"/versions/3.10*/bin/python3.10)
  fi
  candidates+=("$HOME"/.pyenv/versions/3.10*/bin/python3.10 /usr/bin/python3.10 /usr/local/bin/python3.10)
  for py in "${candidates[@]}"; do
    if "$py" -c 'import sys; assert sys.version_info[:2] == (3, 10)' >/dev/null 2>&1; then
      echo "$py"; return 0
    fi
  done
  return 1
}

stamp=.venv/.requirements.sha256
test_stamp=.venv/.requirements-test.sha256
want=$(sha256sum requirements.txt pyproject.toml setup.sh | sha256sum | cut -d' ' -f1)
want_tests=$(sha256sum requirements-test.txt | cut -d' ' -f1)
install_tests() {
  if [ "${1:-}" = "--tests" ] && [ "$(cat "$test_stamp" 2>/dev/null)" != "$want_tests" ]; then
    .venv/bin/pip install --quiet -r requirements-test.txt
    echo "$want_tests" > "$test_stamp"
  fi
}
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  install_tests "${1:-}"
  exit 0
fi

py=$(find_python) || {
  echo "setup: Python 3.10 is required (tfx 1.16 needs Python < 3.11, and no" >&2
  echo "setup: tfx release newer than 1.17 installs on glibc 2.36); none found." >&2
  echo "setup: install it, e.g. 'pyenv install 3.10', and run this again." >&2
  exit 1
}
echo "setup: creating .venv with $py and installing requirements.txt (a few minutes, once)" >&2
rm -rf .venv
"$py" -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet -r requirements.txt
# kfp-kubernetes holds the protos of Kubeflow's Kubernetes platform config
# (node selectors, tolerations, secrets: kubeflow/compile/platform.py). It declares
# kfp>=2.6 and protobuf>=4, which this lock's kfp 2.5 and protobuf 3.20 do
# not meet; its generated protos run on them, so it goes in without its
# dependencies, as in kubeflow/Dockerfile.
.venv/bin/pip install --quiet --no-deps kfp-kubernetes==1.5.0
.venv/bin/pip install --quiet --no-deps -e .
echo "$want" > "$stamp"
rm -f "$test_stamp"
install_tests "${1:-}"
