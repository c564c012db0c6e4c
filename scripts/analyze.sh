#!/usr/bin/env bash
# The static analysis of `make lint`: staticcheck and a dead-code check, pinned and installed into
# .tools/bin from the Go module proxy. Any finding fails. A true false positive gets a narrowly
# scoped `//lint:ignore CHECK reason` on the line before it.
#
# Every build tag the repository uses is considered (the e2e, bench and soak tests), so a helper
# used only by a tagged test is not reported: staticcheck merges one run per tag (-matrix; a
# finding counts only when every build has it), deadcode reads them all at once with the tests as
# roots (-test): a function no program and no test reaches is dead and gets deleted.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2   # honnef.co/go/tools
DEADCODE_VERSION=v0.52.0     # golang.org/x/tools

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

rc=0
printf 'unit:\ne2e: -tags=e2e\nbench: -tags=bench\nsoak: -tags=soak\n' | "$tools/staticcheck" -matrix ./... || rc=1
dead=$("$tools/deadcode" -test -tags e2e,bench,soak ./...)
if [ -n "$dead" ]; then
  echo "$dead"
  echo "deadcode: the functions above are reached by no program and no test: delete them" >&2
  rc=1
fi
exit $rc
