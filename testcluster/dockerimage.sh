#!/usr/bin/env bash
# Builds the root filesystem of the test cluster's Docker image (TC_DOCKER=1, see docker.sh) from
# Debian's packages: the essential set (bash, coreutils, libc) plus python3 and libstdc++6 (the one
# system library TensorFlow's wheels need beyond libc, libgcc_s and zlib, so that a TensorFlow venv
# of Debian's /usr/bin/python3 shipped with --env runs inside it), and the marker file
# /etc/tfyarn-test-image that tells a task it runs in this image. docker.sh caches the result keyed
# by this file's hash: any change here builds a new image.
# Usage: dockerimage.sh OUT.tar   (root; needs mmdebstrap and Debian's package mirror)
set -euo pipefail
out=${1:?usage: dockerimage.sh OUT.tar}
suite=bookworm
mirror=${DOCKER_MIRROR:-http://deb.debian.org/debian}
exec mmdebstrap --quiet --format=tar --variant=essential --include=python3,libstdc++6 \
  --customize-hook='echo "tfyarn test image, Debian '"$suite"'" > "$1/etc/tfyarn-test-image"' \
  "$suite" "$out" "$mirror"
