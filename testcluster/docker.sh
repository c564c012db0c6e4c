# Sourced by cluster.sh. With TC_DOCKER=1 (on top of TC_EXECUTOR=linux, root only) the cluster
# starts a Docker daemon of its own (Debian's docker.io) and loads the test image into it:
#   - the daemon: no bridge, no iptables rules, no masquerading (containers use host or no
#     networking only, and nothing but loopback is reachable here); its data and run directories
#     and its socket below $TC_DIR/docker; a runtime named nvidia (runc here: no GPU); started by
#     `up`, stopped by `down`.
#   - the test image: a Debian root filesystem (bash, python3, the marker /etc/tfyarn-test-image)
#     built by dockerimage.sh, imported as $DOCKER_TEST_IMAGE under the trusted registry
#     $DOCKER_TRUSTED_REGISTRY. The root filesystem is cached in $TFYARN_CACHE_DIR (default
#     ~/.cache/tfyarn), keyed by dockerimage.sh's hash; later starts only import it.
DOCKER_BIN=${DOCKER_BIN:-/usr/bin/docker}
DOCKERD_BIN=${DOCKERD_BIN:-/usr/sbin/dockerd}
DOCKER_TRUSTED_REGISTRY=tfyarn.test
# The OCI runtime registered as "nvidia", which YARN's GPU plugin (nvidia-docker-v2) asks docker
# run for: on a GPU machine NVIDIA's nvidia-container-runtime, which gives the container the GPUs
# NVIDIA_VISIBLE_DEVICES names; here, with no GPU, plain runc under that name.
DOCKER_NVIDIA_RUNTIME=${DOCKER_NVIDIA_RUNTIME:-/usr/bin/runc}

docker_recipe_hash() { sha256sum "$TC_HOME/dockerimage.sh" | cut -c1-12; }

docker_set_names() {
  DOCKER_DIR=$TC_DIR/docker
  DOCKER_SOCKET=$DOCKER_DIR/docker.sock
  DOCKER_HOST_URL=unix://$DOCKER_SOCKET
}

# docker_rootfs prints the cached root filesystem tarball of the test image, building it first
# (testcluster/dockerimage.sh) when that recipe has none yet.
docker_rootfs() {
  local cache=${TFYARN_CACHE_DIR:-$HOME/.cache/tfyarn}/docker-images
  local tar; tar=$cache/tfyarn-test-image-$(docker_recipe_hash).tar
  if [ ! -s "$tar" ]; then
    command -v mmdebstrap >/dev/null || die "TC_DOCKER=1 builds its test image with mmdebstrap: run scripts/prereqs.sh as root (or apt-get install mmdebstrap)"
    mkdir -p "$cache"
    echo "testcluster: building the test image from Debian packages (once; cached in $cache)" >&2
    bash "$TC_HOME/dockerimage.sh" "$tar.new" >"$cache/build.log" 2>&1 \
      || { rm -f "$tar.new"; die "building the test image failed; see $cache/build.log"; }
    mv -f "$tar.new" "$tar"
  fi
  echo "$tar"
}

dockerd_alive() { [ -f "$DOCKER_DIR/dockerd.pid" ] && kill -0 "$(cat "$DOCKER_DIR/dockerd.pid")" 2>/dev/null; }

# docker_up starts the cluster's Docker daemon and loads the test image into it.
docker_up() {
  [ "$TC_EXECUTOR" = linux ] || die "TC_DOCKER=1 needs TC_EXECUTOR=linux (YARN's Docker runtime runs under the LinuxContainerExecutor)"
  [ -x "$DOCKERD_BIN" ] && [ -x "$DOCKER_BIN" ] || die "TC_DOCKER=1 needs Debian's docker.io ($DOCKERD_BIN, $DOCKER_BIN): run scripts/prereqs.sh as root (or apt-get install docker.io)"
  docker_set_names
  docker_down
  DOCKER_TEST_IMAGE=$DOCKER_TRUSTED_REGISTRY/tfyarn-test-image:$(docker_recipe_hash)
  local rootfs; rootfs=$(docker_rootfs)
  mkdir -p "$DOCKER_DIR/data" "$DOCKER_DIR/run"
  chmod 0711 "$DOCKER_DIR"
  # No container networks: no bridge, no iptables or masquerading rules on this machine.
  # Closes what it inherited (close_inherited_fds, cluster.sh): dockerd outlives the caller.
  (close_inherited_fds && exec setsid "$DOCKERD_BIN" --host "$DOCKER_HOST_URL" --data-root "$DOCKER_DIR/data" --exec-root "$DOCKER_DIR/run" \
    --pidfile "$DOCKER_DIR/dockerd.pid" --bridge=none --iptables=false --ip-masq=false --ip6tables=false \
    --userland-proxy=false --group root --log-level warn --add-runtime nvidia="$DOCKER_NVIDIA_RUNTIME" \
    </dev/null >"$TC_DIR/logs/dockerd.log" 2>&1) &
  local i
  for i in $(seq 1 120); do
    "$DOCKER_BIN" --host "$DOCKER_HOST_URL" version >/dev/null 2>&1 && break
    [ "$i" = 120 ] && die "the cluster's Docker daemon did not answer on $DOCKER_SOCKET within 60s; see $TC_DIR/logs/dockerd.log"
    sleep 0.5
  done
  if ! "$DOCKER_BIN" --host "$DOCKER_HOST_URL" image inspect "$DOCKER_TEST_IMAGE" >/dev/null 2>&1; then
    "$DOCKER_BIN" --host "$DOCKER_HOST_URL" import "$rootfs" "$DOCKER_TEST_IMAGE" >/dev/null \
      || die "importing $rootfs as $DOCKER_TEST_IMAGE failed; see $TC_DIR/logs/dockerd.log"
  fi
  echo "$DOCKER_TEST_IMAGE" > "$DOCKER_DIR/test-image"
}

# docker_down removes every container of the cluster's daemon and stops it (nothing when none runs).
docker_down() {
  docker_set_names
  dockerd_alive || return 0
  local pid ids
  pid=$(cat "$DOCKER_DIR/dockerd.pid")
  ids=$(timeout 20 "$DOCKER_BIN" --host "$DOCKER_HOST_URL" ps -aq 2>/dev/null || true)
  # shellcheck disable=SC2086
  [ -n "$ids" ] && timeout 30 "$DOCKER_BIN" --host "$DOCKER_HOST_URL" rm -f $ids >/dev/null 2>&1
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$DOCKER_DIR/dockerd.pid" "$DOCKER_DIR/test-image"
}
