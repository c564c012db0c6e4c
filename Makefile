# tfyarn — see README.md. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
GO ?= go
# go.mod's toolchain line (a Go with the standard library's security fixes) wins over the machine's
# own Go, which the go command then fetches from the module proxy once (GOTOOLCHAIN=local ignores it).
export GOTOOLCHAIN := auto
PROFILE ?= plain
GOFILES = $(shell git ls-files --cached --others --exclude-standard '*.go' | grep -v '^internal/yarnpb/hadoop')

.PHONY: build release test test-compat test-notebooks check clean-machine unit e2e faults checkpoints cluster-up cluster-down cluster-status demo proto bench soak fmt lint clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/tfyarn ./cmd/tfyarn

# dist/: tarballs, wheels, SBOMs and SHA256SUMS of a clean commit, byte for byte the same on
# every build of it (docs/development.md, Releasing).
release:
	@CGO_ENABLED=0 $(GO) build -trimpath -o bin/mkrelease ./internal/release/mkrelease && bin/mkrelease -version '$(VERSION)' -out dist

# Unit tests, then the end-to-end tests against one shared start of the real cluster.
test:
	bash scripts/test.sh

# Every notebook of examples/notebooks/ (TensorFlow, PyTorch, local, failing) executed headless
# against the test cluster (docs/python.md); make test runs the local and failing ones.
test-notebooks: build
	$(GO) test -tags 'e2e notebooks' -count=1 -timeout 40m -run 'TestE2ENotebooks$$|TestNotebooksAll$$' ./python/

# The inner loop: lint and unit tests, no cluster (about 2 minutes on a 2-core machine).
check:
	bash scripts/check.sh

# Removes what the test clusters installed on this machine (root): see scripts/clean-machine.sh.
clean-machine:
	bash scripts/clean-machine.sh

unit:
	$(GO) test -count=1 ./...

e2e: build
	source .testcluster/env.sh && $(GO) test -tags e2e -count=1 -p 2 -timeout 25m ./...

# The fault-injection suite alone (also part of `make test`), on its own test cluster
# (.testcluster-faults, stopped afterwards); writes bench/results/faults.md.
faults: build
	rc=0; TFYARN_FAULTS_RESULTS=$(CURDIR)/bench/results/faults.md $(GO) test -tags e2e -count=1 -timeout 10m -run 'TestE2EFaults$$' ./cmd/tfyarn || rc=$$?; \
	TC_DIR=$(CURDIR)/.testcluster-faults bash testcluster/cluster.sh down >/dev/null 2>&1; exit $$rc

# The checkpoint tests with real frameworks (Keras under MultiWorkerMirroredStrategy preempted
# mid-epoch), longer than make test's budget; on the faults cluster, stopped afterwards.
checkpoints: build
	rc=0; TFYARN_CHECKPOINT_RESULTS=$(CURDIR)/bench/results/checkpoints.md $(GO) test -tags e2e,checkpoints -count=1 -timeout 15m -run 'TestE2ECheckpoint' ./cmd/tfyarn || rc=$$?; \
	TC_DIR=$(CURDIR)/.testcluster-faults bash testcluster/cluster.sh down >/dev/null 2>&1; exit $$rc

# The compatibility suite on every Hadoop release of docs/hadoop-versions.md, each on its own
# cluster (.testcluster-hadoop-X, stopped after its cases); TFYARN_COMPAT_VERSIONS="3.5.0" for some.
test-compat: build
	rc=0; $(GO) test -tags 'e2e compat' -count=1 -timeout 60m -run 'TestCompat$$' ./cmd/tfyarn || rc=$$?; \
	for d in $(CURDIR)/.testcluster-hadoop-*/; do [ -d "$$d" ] && TC_DIR="$${d%/}" bash testcluster/cluster.sh down >/dev/null 2>&1; done; exit $$rc

# HADOOP_VERSION=X: Hadoop X's cluster in .testcluster-hadoop-X on ports of its own (docs/hadoop-versions.md).
cluster-up:
	bash testcluster/cluster.sh up $(PROFILE)

cluster-down:
	bash testcluster/cluster.sh down

cluster-status:
	bash testcluster/cluster.sh status

demo:
	bash scripts/demo.sh

proto:
	bash scripts/genproto.sh

bench: build
	bash bench/run.sh

# 20 back-to-back MultiWorkerMirroredStrategy jobs on the cluster: no hang, no port conflict
# (results in bench/results/soak.md; about 6 minutes).
soak:
	bash bench/soak.sh

fmt:
	gofmt -w $(GOFILES)

lint:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./...
	$(GO) vet -tags 'e2e compat' ./cmd/tfyarn/
	$(GO) vet -tags 'e2e checkpoints' ./cmd/tfyarn/
	$(GO) vet -tags bench ./bench/
	$(GO) vet -tags soak ./bench/
	$(GO) vet -tags notebooks ./python/
	bash scripts/analyze.sh

clean:
	rm -rf bin testcluster/target
