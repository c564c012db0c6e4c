#!/usr/bin/env bash
# The machine prerequisites of `make test` and `make demo`, in one place (.ci/run, scripts/test.sh
# and scripts/demo.sh call it): Debian packages that are missing are installed when running as
# root; otherwise one line names exactly what to install and the script exits 2.
# Usage: prereqs.sh [test|demo]   (demo needs no browser)
set -euo pipefail
what=${1:-test}

need=()
command -v java >/dev/null 2>&1 && java -version 2>&1 | grep -q '"17' || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v flock >/dev/null 2>&1 || need+=(util-linux)
# The test environments are made from the system's interpreter (scripts/tfenv.sh says why).
[ -x /usr/bin/python3 ] || need+=(python3)
/usr/bin/python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
command -v make >/dev/null 2>&1 || need+=(make)
# The test cluster runs containers as their users: it creates users alice and bob (and the tests
# theirs) with useradd.
command -v useradd >/dev/null 2>&1 || need+=(passwd)
if [ "$what" = test ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium) # the web UI's headless-browser test
  # The cluster with YARN's Docker runtime (TC_DOCKER=1): its own daemon from Debian's docker.io
  # and a test image built from Debian packages by mmdebstrap.
  { [ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ]; } || { command -v dockerd && command -v docker; } >/dev/null 2>&1 || need+=(docker.io)
  command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
  # MIT's kinit, kswitch and kdestroy: the KEYRING ticket cache tests write real caches with them.
  { command -v kinit && command -v kswitch && command -v kdestroy; } >/dev/null 2>&1 || need+=(krb5-user)
fi

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "prereqs: missing ${need[*]}: run 'sudo apt-get install ${need[*]}' (or run this as root) and try again" >&2
    exit 2
  fi
  echo "prereqs: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends "${need[@]}" >&2
fi
command -v go >/dev/null 2>&1 || { echo "prereqs: Go is not installed: install Go 1.26 or newer from https://go.dev/dl and try again" >&2; exit 2; }
