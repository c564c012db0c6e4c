# Sourced by cluster.sh; lce_install, when TC_EXECUTOR=linux, installs what YARN's LinuxContainerExecutor needs on
# this machine (root only). Sets LCE_EXE (the setuid helper), LCE_CGROUPS (the NodeManagers' cgroup
# hierarchy, or "none" with the reason printed) and LCE_CLASSPATH (the cluster's classpath with
# every jar where the users' localizer JVMs can read it: ~/.m2 of root is not).
LCE_GROUP=tfyarnnm
LCE_USERS=(alice bob)

lce_install() {
  [ "$(id -u)" = 0 ] || die "the test cluster runs containers as their users (TC_EXECUTOR=linux, the default), which installs a setuid helper and creates the users ${LCE_USERS[*]}: run it as root, or set TC_EXECUTOR=default (every container as you)"
  command -v go >/dev/null || die "TC_EXECUTOR=linux builds its helper with Go: install Go 1.26 or newer"
  getent group "$LCE_GROUP" >/dev/null || groupadd --system "$LCE_GROUP"
  local u
  for u in "${LCE_USERS[@]}"; do
    id -u "$u" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh --key UID_MIN=2000 "$u"
    [ "$(id -u "$u")" -ge 2000 ] || die "user $u exists with uid $(id -u "$u"), below 2000, so the cluster did not make it and its helper refuses it: remove the user (userdel $u) and start again"
  done
  # The helper, its configuration and every directory above them: root's alone (the helper
  # checks it and refuses to run otherwise).
  local etc=$TC_DIR/etc bin=$TC_DIR/bin d
  mkdir -p "$etc" "$bin"
  chown root:root "$TC_DIR" "$etc" "$bin"
  chmod 0755 "$TC_DIR" "$etc" "$bin"
  d=$(dirname "$TC_DIR")
  while :; do
    [ "$(stat -c %u "$d")" = 0 ] || die "TC_EXECUTOR=linux: $d is not owned by root, so the setuid helper would trust a directory another user controls; put the cluster directory (TC_DIR) below root-owned directories"
    case "$(stat -c %A "$d")" in
      ?????w????|????????w?) [ -k "$d" ] || die "TC_EXECUTOR=linux: $d is writable by group or others; put the cluster directory (TC_DIR) below directories only root may write" ;;
    esac
    [ "$d" = / ] && break
    d=$(dirname "$d")
  done
  # The containers' users run this checkout's environments and examples by their paths (.venv's
  # python, --python): every directory down to it must let them through.
  d=$TC_ROOT
  while [ "$d" != / ]; do
    case "$(stat -c %A "$d")" in
      ?????????[xt]) ;;
      *) die "the cluster runs containers as their users (alice, bob, ...), who cannot enter $d (mode $(stat -c %a "$d")) to reach this checkout's environments: clone it below directories others may enter (chmod o+x $d), or set TC_EXECUTOR=default" ;;
    esac
    d=$(dirname "$d")
  done
  LCE_EXE=$bin/container-executor
  (cd "$TC_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "-X main.configFile=$etc/container-executor.cfg" \
    -o "$LCE_EXE.new" ./testcluster/containerexecutor) || die "could not build testcluster/containerexecutor"
  chown "root:$LCE_GROUP" "$LCE_EXE.new"
  chmod 6050 "$LCE_EXE.new"
  mv -f "$LCE_EXE.new" "$LCE_EXE"
  LCE_CGROUPS=none
  local hier why="" c controllers=(cpu memory)
  # YARN's GPU plugin (the docker profile's GPU NodeManager) keeps each container's devices in a
  # devices cgroup of its own.
  [ "${TC_DOCKER:-0}" = 1 ] && controllers+=(devices)
  hier=$(lce_hierarchy)
  if [ "${TC_CGROUPS:-}" = none ]; then
    why="TC_CGROUPS=none"
  else
    for c in "${controllers[@]}"; do
      if [ ! -d "/sys/fs/cgroup/$c" ]; then why="no cgroup v1 $c controller mounted at /sys/fs/cgroup/$c"; break; fi
      mkdir -p "/sys/fs/cgroup/$c/$hier" 2>/dev/null || { why="cannot create /sys/fs/cgroup/$c/$hier"; break; }
    done
  fi
  if [ -z "$why" ]; then
    LCE_CGROUPS=/$hier
    echo "$hier" > "$etc/cgroups"
  else
    echo "testcluster: containers run without cgroups: $why"
  fi
  local cgdirs=""
  [ "$LCE_CGROUPS" != none ] && for c in "${controllers[@]}"; do cgdirs+="${cgdirs:+,}/sys/fs/cgroup/$c/$hier"; done
  # The NodeManagers' local and log directories, the only places the helper touches: below
  # data/yarn/tfyarn for MiniYARNCluster's NodeManagers, data/nm-I/{local,logs} for NodeManager
  # processes of their own.
  local i localdirs=$TC_DIR/data/yarn/tfyarn logdirs=$TC_DIR/data/yarn/tfyarn
  for i in $(seq 0 $((TC_NODEMANAGERS - 1))); do
    localdirs+=",$TC_DIR/data/nm-$i/local"
    logdirs+=",$TC_DIR/data/nm-$i/logs"
  done
  cat > "$etc/container-executor.cfg.new" <<CFG
# Written by testcluster/cluster.sh for the test cluster's container-executor.
yarn.nodemanager.linux-container-executor.group=$LCE_GROUP
min.user.id=2000
banned.users=root,bin,daemon,hdfs,yarn
test.users=$(IFS=,; echo "${LCE_USERS[*]}"),tfyarn-*
yarn.nodemanager.local-dirs=$localdirs
yarn.nodemanager.log-dirs=$logdirs
${cgdirs:+cgroups.dirs=$cgdirs}
CFG
  if [ "${TC_DOCKER:-0}" = 1 ]; then
    # YARN's Docker runtime (testcluster/docker.sh): the cluster's own daemon, images from the
    # trusted registry only, host networking only, read-write mounts of the NodeManagers' own
    # directories, read-only mounts below $TC_DIR/docker-mounts, Docker's default capabilities,
    # and the OCI runtime nvidia that YARN's GPU plugin asks for (nvidia-docker-v2).
    mkdir -p "$TC_DIR/docker-mounts"
    chmod 0755 "$TC_DIR/docker-mounts"
    cat >> "$etc/container-executor.cfg.new" <<CFG
docker.binary=$DOCKER_BIN
docker.host=unix://$TC_DIR/docker/docker.sock
docker.trusted.registries=$DOCKER_TRUSTED_REGISTRY
docker.allowed.networks=host
docker.allowed.rw-mounts=$localdirs,$logdirs
docker.allowed.ro-mounts=$TC_DIR/docker-mounts
docker.allowed.capabilities=CHOWN,DAC_OVERRIDE,FSETID,FOWNER,MKNOD,NET_RAW,SETGID,SETUID,SETFCAP,SETPCAP,NET_BIND_SERVICE,SYS_CHROOT,KILL,AUDIT_WRITE
docker.allowed.runtimes=nvidia
CFG
  fi
  chmod 0644 "$etc/container-executor.cfg.new"
  mv -f "$etc/container-executor.cfg.new" "$etc/container-executor.cfg"
  # Jars where every user can read them (hard links when on the same filesystem).
  local lib=$TC_DIR/lib jar dst cp=()
  mkdir -p "$lib"
  chmod 0755 "$lib"
  IFS=: read -r -a jars < "$TC_TARGET/classpath.txt" || true  # no final newline
  for jar in "${jars[@]}"; do
    dst=$lib/${jar#"$HOME"/.m2/repository/}
    if [ ! -f "$dst" ]; then
      mkdir -p "$(dirname "$dst")"
      ln -f "$jar" "$dst" 2>/dev/null || cp -f "$jar" "$dst"
      chmod a+r "$dst"
    fi
    cp+=("$dst")
  done
  chmod -R a+rX "$lib"
  local IFS=:
  LCE_CLASSPATH="$TC_HOME/conf:$TC_TARGET/classes:${cp[*]}"
}

# The NodeManagers' cgroup hierarchy below each controller: one per cluster directory.
lce_hierarchy() { echo "tfyarn-$(printf '%s' "$TC_DIR" | md5sum | cut -c1-8)"; }

# Removes the cluster's cgroups (empty once its containers are gone), if it made any.
lce_remove_cgroups() {
  local c d hier
  [ -f "$TC_DIR/etc/cgroups" ] || return 0
  hier=$(cat "$TC_DIR/etc/cgroups")
  [[ "$hier" =~ ^tfyarn-[0-9a-f]{8}$ ]] || return 0
  for c in cpu memory devices; do
    d=/sys/fs/cgroup/$c/$hier
    [ -d "$d" ] || continue
    find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$d" 2>/dev/null || true
  done
  rm -f "$TC_DIR/etc/cgroups"
}
