#!/usr/bin/env bash
# `make clean-machine`: removes what the test clusters and `make test` put on this machine outside
# the build (root only), saying each thing it removed:
#   - every test cluster of this checkout (.testcluster*): stopped, then its directory with the
#     setuid helper, the HDFS and NodeManager data and the cluster's Docker daemon's images;
#   - the Unix users the clusters made (alice, bob, tfyarn-*) with their files, and the group
#     tfyarnnm; the lines mapping nmI.tfyarn.test in /etc/hosts;
#   - the caches: the Python environments (/var/cache/tfyarn/venvs, and the links .venv*), the
#     test image's root filesystem and the client's pack cache (~/.cache/tfyarn).
# Debian's packages that scripts/prereqs.sh installed stay (they are the prerequisites the README
# names); so do Go's module and build caches and Maven's ~/.m2.
#
# Its test (internal/clustertest) points it at a sandbox through CLEAN_ROOT (the checkout whose
# clusters go), CLEAN_HOSTS, CLEAN_CACHES, CLEAN_USERS (a regular expression) and CLEAN_GROUP.
set -euo pipefail
cd "$(dirname "$0")/.."
source testcluster/users.sh
root=${CLEAN_ROOT:-$PWD}
hosts=${CLEAN_HOSTS:-/etc/hosts}
read -r -a caches <<<"${CLEAN_CACHES:-/var/cache/tfyarn ${HOME:-/root}/.cache/tfyarn}"
users=${CLEAN_USERS:-'^(alice|bob|tfyarn-.*)$'}
group=${CLEAN_GROUP:-tfyarnnm}
export TFYARN_REPO_ROOT=$root
[ "$(id -u)" = 0 ] || { echo "clean-machine: run as root: what it removes (users, /etc/hosts lines, the setuid helper) is root's" >&2; exit 2; }

removed=0
said() { echo "clean-machine: $*"; removed=$((removed + 1)); }

for dir in "$root"/.testcluster*; do
  [ -d "$dir" ] || continue
  TC_DIR="$dir" bash testcluster/cluster.sh down >/dev/null 2>&1 || true
  # The cluster's Docker daemon leaves its network namespace mounted below the directory.
  awk '{print $2}' /proc/self/mounts | grep -F "$dir/" | sort -r | while read -r mnt; do umount -l "$mnt" 2>/dev/null || true; done || true
  if rm -rf "$dir"; then
    said "removed the test cluster $dir (stopped first; its setuid helper, data and Docker images with it)"
  else
    echo "clean-machine: could not remove all of $dir (above); remove what is left by hand" >&2
  fi
done
rm -f "$root"/.testcluster*.lock

for name in $(test_users_made "$users"); do
  line=$(remove_test_user "$name") && said "${line#testcluster: }"
done
if getent group "$group" >/dev/null; then
  groupdel "$group" && said "removed the group $group"
fi

if grep -q ' nm[0-9]*\.tfyarn\.test$' "$hosts" 2>/dev/null; then
  n=$(grep -c ' nm[0-9]*\.tfyarn\.test$' "$hosts")
  # /etc/hosts may be a bind mount (containers): rewrite it in place rather than replace it.
  kept=$(grep -v ' nm[0-9]*\.tfyarn\.test$' "$hosts" || true)
  printf '%s\n' "$kept" >"$hosts"
  said "removed $n line(s) mapping nmI.tfyarn.test from $hosts"
fi

for cache in "${caches[@]}"; do
  [ -d "$cache" ] || continue
  size=$(du -sh "$cache" 2>/dev/null | cut -f1)
  rm -rf "$cache"
  said "removed the cache $cache ($size: Python environments, the test image's root filesystem, packed environments)"
done
for venv in "$root"/.venv "$root"/.venv-*; do
  [ -e "$venv" ] || [ -L "$venv" ] || continue
  rm -rf "$venv"
  said "removed $venv"
done
[ -n "${CLEAN_ROOT:-}" ] || rm -rf /tmp/tfyarn-testcluster-*.lock /run/tfyarn-testcluster

[ "$removed" = 0 ] && echo "clean-machine: nothing of the test clusters was on this machine"
exit 0
