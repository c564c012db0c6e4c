#!/usr/bin/env bash
# The static analysis of `make lint`: staticcheck, a dead-code check and govulncheck, pinned and
# installed into .tools/bin from the Go module proxy. Any finding fails. A true false positive gets a narrowly
# scoped `//lint:ignore CHECK reason` on the line before it.
#
# Every build tag the repository uses is considered (the e2e, compat, bench, soak, checkpoints and notebooks tests), so a helper
# used only by a tagged test is not reported: staticcheck merges one run per tag (-matrix; a
# finding counts only when every build has it), deadcode reads them all at once with the tests as
# roots (-test): a function no program and no test reaches is dead and gets deleted.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2   # honnef.co/go/tools
DEADCODE_VERSION=v0.52.0     # golang.org/x/tools
GOVULNCHECK_VERSION=v1.9.0   # golang.org/x/vuln
# The Go vulnerability database as of 2026-11-05: the OSV files of the Go module golang.org/x/vulndb
# at this version (the module proxy serves it; vuln.go.dev is not reachable from every machine),
# indexed by that module's own indexdb into .tools/vulndb-VERSION. Move it forward with the toolchain.
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018

tools="$PWD/.tools/bin"
mkdir -p "$tools"
# install BINARY PACKAGE MODULE VERSION: unless .tools/bin already holds that version.
install() {
  if [ ! -x "$tools/$1" ] || ! go version -m "$tools/$1" | grep -q "^[[:space:]]*mod[[:space:]]*$3[[:space:]]*$4[[:space:]]"; then
    GOBIN="$tools" go install "$2@$4"
  fi
}
install staticcheck honnef.co/go/tools/cmd/staticcheck honnef.co/go/tools "$STATICCHECK_VERSION"
install deadcode golang.org/x/tools/cmd/deadcode golang.org/x/tools "$DEADCODE_VERSION"
install govulncheck golang.org/x/vuln/cmd/govulncheck golang.org/x/vuln "$GOVULNCHECK_VERSION"
install indexdb golang.org/x/vulndb/cmd/indexdb golang.org/x/vulndb "$VULNDB_VERSION"
vulndb="$PWD/.tools/vulndb-$VULNDB_VERSION"
if [ ! -s "$vulndb/index/db.json" ]; then
  src=$(cd "$tools" && GOFLAGS= go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src/data/osv" ] || { echo "analyze: golang.org/x/vulndb@$VULNDB_VERSION has no data/osv" >&2; exit 2; }
  rm -rf "$vulndb.new"
  "$tools/indexdb" -vulns "$src/data/osv" -out "$vulndb.new"
  mv "$vulndb.new" "$vulndb"
fi

rc=0
printf 'unit:\ne2e: -tags=e2e\ncompat: -tags=e2e,compat\nbench: -tags=bench\nsoak: -tags=soak\ncheckpoints: -tags=e2e,checkpoints\nnotebooks: -tags=notebooks\n' | "$tools/staticcheck" -matrix ./... || rc=1
dead=$("$tools/deadcode" -test -tags e2e,compat,bench,soak,checkpoints,notebooks ./...)
if [ -n "$dead" ]; then
  echo "$dead"
  echo "deadcode: the functions above are reached by no program and no test: delete them" >&2
  rc=1
fi
# Against the standard library of the toolchain go.mod names (GOTOOLCHAIN: the Makefile's auto).
"$tools/govulncheck" -db "file://$vulndb" ./... || rc=1
exit $rc
