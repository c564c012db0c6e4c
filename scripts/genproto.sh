#!/usr/bin/env bash
# Regenerates internal/yarnpb/*/*.pb.go from internal/yarnpb/proto with pinned tools:
# protoc from Maven Central (no GitHub downloads needed) and protoc-gen-go from the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOC_VERSION=4.29.3            # protoc 29.3
PROTOC_GEN_GO_VERSION=v1.36.12   # must match google.golang.org/protobuf in go.mod

tools="$PWD/.tools"
mkdir -p "$tools/bin"
protoc="$tools/bin/protoc-$PROTOC_VERSION"
if [ ! -x "$protoc" ]; then
  mvn -q -B dependency:get -Dartifact="com.google.protobuf:protoc:$PROTOC_VERSION:exe:linux-x86_64" -Dtransitive=false \
    || { echo "make proto: could not fetch protoc $PROTOC_VERSION from Maven Central; check Maven's network settings" >&2; exit 2; }
  cp "$HOME/.m2/repository/com/google/protobuf/protoc/$PROTOC_VERSION/protoc-$PROTOC_VERSION-linux-x86_64.exe" "$protoc"
  chmod +x "$protoc"
fi
if [ ! -x "$tools/bin/protoc-gen-go" ] || ! "$tools/bin/protoc-gen-go" --version | grep -q "${PROTOC_GEN_GO_VERSION#v}"; then
  GOBIN="$tools/bin" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
fi

# Each proto directory is one Go package; the proto package is renamed (tfyarn.hadoop.*) and the
# files live under tfyarn/hadoop/ so their registrations never clash with colinmarc/hdfs's.
module=$(go list -m)
for dir in internal/yarnpb/proto/tfyarn/hadoop/*/; do
  files=("$dir"*.proto)
  [ -e "${files[0]}" ] || continue
  PATH="$tools/bin:$PATH" "$protoc" -I internal/yarnpb/proto \
    --go_out=. --go_opt=module="$module" \
    "${files[@]}"
done
echo "generated: $(find internal/yarnpb -name '*.pb.go' | wc -l) files"
