# patchctl: the two commands in README.md are `make run` and `make test`.
GO      ?= go
BIN     := bin/patchctl
KERNEL  ?= 6.12
# The kernels `make test` runs end to end (tree, builds, boots): the
# default kernel, the one `make run` builds, so the two commands together
# pay one cold build of a pinned kernel on a fresh machine (README says
# why not more). `make test-matrix` runs every pinned kernel (5.10, 6.1,
# 6.12, 7.2, 7.3); any list works: make test TEST_KERNELS="6.12 7.3".
TEST_KERNELS ?= 6.12
# Every go command make runs builds with -trimpath: make build, vet, the
# tests and the go builds they start, the tools' installs. The guest agent
# is always built with it (internal/boot: its bytes the same from any
# checkout), and -trimpath is part of every package's key in Go's build
# cache, so without it here a fresh machine compiled the standard library
# twice: once for patchctl and the tests, once for the agent. The
# user's own GOFLAGS (environment or go env -w) are kept.
GOFLAGS := $(strip $(shell $(GO) env GOFLAGS 2>/dev/null))
ifeq ($(filter -trimpath,$(GOFLAGS)),)
GOFLAGS := $(strip $(GOFLAGS) -trimpath)
endif
export GOFLAGS

.PHONY: all deps build run test test-go test-static test-matrix test-ci test-ci-e2e actionlint lint vet fuzz bench clean

all: build

deps:
	@scripts/deps.sh

build:
	$(GO) build -o $(BIN) ./cmd/patchctl

# The main job on the default kernel: the whole pipeline (tree, apply,
# checks, builds, boots, compare) with reports in out/run.
run: deps build
	$(BIN) run --kernel $(KERNEL) --out out/run

# Static checks and every test, the end-to-end run on TEST_KERNELS
# included (trees, builds and tools are cached under the user's cache dir:
# with make run, a fresh machine pays one cold kernel build).
#
# The static checks (gofmt, vet, actionlint, golangci-lint: test-static)
# run beside the tests (test-go) at the lowest CPU priority (nice 19), so
# that they take the CPU the tests leave idle: a test package waiting for a
# kernel's lock or a one-CPU QEMU boot, the last package running alone. On
# a fresh machine after make run the tests used 1157 CPU-s in 628 s on 2
# cores (2026-12-06): about 100 CPU-s idle, while the static checks took
# 181 s (347 CPU-s, golangci-lint's install from source the most of it)
# before them. Beside the tests at the same priority (session 15) the
# first test packages ran 60-80% longer and the whole was slower than one
# after the other. At nice 19 (session 23, fresh HOME after make run, one
# state restored for each): .ci/run 12m53s, and 12m33s (1479 CPU-s) once
# patchctl's builds ignored make's own flags in MAKEFLAGS (docs/build.md),
# against 13m43s (1494 CPU-s) with the static checks first. Each
# check's output is printed whole when it ends; any failure fails make
# test, after both sides have finished.
# The test binaries are linked without DWARF (-ldflags=-w: no test reads
# its own debug info; stack traces come from the runtime's own tables):
# 35 links; checks.test's took 3.0 CPU-s against 4.3 (2026-12-05), the
# others were not measured one by one.
# go test runs no vet of its own (-vet=off): its vet is a subset of the
# analyzers `go vet ./...` runs in test-static beside it (and test-matrix
# before it), and each package's vet was paid twice, under two cache keys.
# The test binaries' compile after make run (2026-12-06, two runs each on
# copies of one Go cache): 28.0-28.2 s and 54.2-54.4 CPU-s with it,
# 23.6-24.3 s and 45.8-47.1 CPU-s without.
TEST_FLAGS := -count=1 -ldflags=-w -vet=off
# go test runs the packages two at a time, in the order named: the longest
# first (a fresh make test after make run, 2026-12-06: cmd/patchctl 252 s,
# checks 235 s, internal/build 175 s, internal/pipeline 102 s, then the
# others under 75 s), so that no long one starts last and runs alone (in
# alphabetical order internal/pipeline started at 519 s of 646 and ran
# its last 40 s alone). Measured once since: the tests took 628 s
# (1157 CPU-s) against 622 s and 646 s in two runs in alphabetical
# order: they are bound by CPU, and the order changed nothing measurable.
TEST_PACKAGES := ./cmd/patchctl ./checks ./internal/build ./internal/pipeline ./...
# make's jobs: test-go and test-static take two of four, and test-static's
# make (no -j of its own: one would reset the jobserver, with a warning)
# runs its three checks on the two left and its own.
test: deps
	@$(MAKE) --no-print-directory -j4 test-go test-static

test-go:
	PATCHCTL_TEST_KERNELS="$(TEST_KERNELS)" $(GO) test $(TEST_FLAGS) -timeout 75m $(TEST_PACKAGES)

test-static:
	@nice -n 19 $(MAKE) --no-print-directory --output-sync=target vet actionlint lint

# Every test on every pinned kernel: the end-to-end run of each (a fresh
# machine: five cold builds, about 40 minutes on 2 cores), the checks'
# engine over every file of each tree's default scope (no crash), and the
# tests that compare pinned kernels, which `make test` runs only on the
# kernels under test and those already prepared (a fresh machine fetches
# the default kernel's tree alone). PATCHCTL_TEST_FULL=1: the tests that
# `make test` runs on a fixed part (docs/ci.md, "make test and the full
# tests": e.g. the engine over a share of a tree's files) run in full.
test-matrix: deps vet
	PATCHCTL_TEST_KERNELS=all PATCHCTL_TEST_FULL=1 $(GO) test $(TEST_FLAGS) -timeout 150m $(TEST_PACKAGES)

# The workflow linted by actionlint (a Go tool, installed into the cache
# the first time); any finding fails.
ACTIONLINT_VERSION := v1.7.12
CACHE_DIR ?= $(or $(PATCHCTL_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/patchctl)
ACTIONLINT := $(CACHE_DIR)/tools/go/bin/actionlint
actionlint:
	@test -x $(ACTIONLINT) || (cd /tmp && GOBIN=$(dir $(ACTIONLINT)) GOFLAGS='$(GOFLAGS) -mod=mod' $(GO) install -ldflags='-s -w' github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION))
	$(ACTIONLINT) -no-color .github/workflows/*.yml

# The Go code linted by golangci-lint (.golangci.yml: the standard set,
# bug-finding linters and the layering rules; installed into the cache's
# tools the first time, pinned); any finding fails. Its own packages are
# compiled without the compiler's optimizations (-N -l): on a cold Go cache
# the install is what a fresh machine's `make test` waits for first (2 idle
# cores, 2026-12-05: 153 s and 290 CPU-s optimized, 122 s and 228 CPU-s
# without), and the slower binary costs a cold lint run 3 s (31 s against
# 34). The standard library keeps the default flags (std=), so the packages
# `make build` and vet compiled are reused: 111 s and 207 CPU-s against
# 129 s and 242 CPU-s after them (2026-12-05, session 15). Linked without
# symbols or DWARF (-s -w; nobody debugs the linter here): its link, the
# install's last step, 5.0 s and 6.0 CPU-s against 6.8 s and 8.1 CPU-s
# (2026-12-06, compiled packages cached).
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(CACHE_DIR)/tools/go/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint
lint:
	@test -x $(GOLANGCI_LINT) || (cd /tmp && GOBIN=$(dir $(GOLANGCI_LINT)) GOFLAGS='$(GOFLAGS) -mod=mod' $(GO) install -gcflags='all=-N -l' -gcflags='std=' -ldflags='-s -w' github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION))
	GOLANGCI_LINT_CACHE=$(CACHE_DIR)/tools/golangci-lint-cache $(GOLANGCI_LINT) run ./...

# The CI jobs' scripts (scripts/ci/) in a bookworm root filesystem built
# from Debian's packages (docs/ci.md): matrix, pins, and a kernel job
# through make build and tree prepare. No kernel build.
test-ci:
	PATCHCTL_TEST_CI=1 $(GO) test -count=1 -timeout 40m -v -run '^TestJobImage$$' ./internal/report/reportcheck

# The workflow's kernel job for one kernel, then its verdict job, simulated
# end to end in the job image's bookworm root filesystem (TCG boots, a
# fresh patchctl cache, the source package and ccache restored as from an
# older cache entry): builds and boots a kernel. See docs/ci.md.
test-ci-e2e:
	PATCHCTL_TEST_CI_E2E=1 PATCHCTL_TEST_CI_KERNEL=$(KERNEL) $(GO) test -count=1 -timeout 300m -v -run '^TestJobImageWorkflow$$' ./internal/report/reportcheck

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

fuzz:
	$(GO) test -run XXX -fuzz '^FuzzImport$$' -fuzztime 60s ./internal/mailpatch
	$(GO) test -run XXX -fuzz '^FuzzImportGit$$' -fuzztime 60s ./internal/mailpatch
	$(GO) test -run XXX -fuzz '^FuzzEngine$$' -fuzztime 60s ./checks
	$(GO) test -run XXX -fuzz '^FuzzKernelName$$' -fuzztime 20s ./internal/tree
	PATCHCTL_GEN_SEED=random PATCHCTL_GEN_CASES=600 $(GO) test -count=1 -v -run '^TestImportDifferentialGit$$|^TestReadThreadGeneratedLikeImport$$' ./internal/mailpatch
	PATCHCTL_PROP_SEED=random PATCHCTL_PROP_CASES=20000 $(GO) test -count=1 -run '^TestApplyPropertyGNU' ./internal/apply
	PATCHCTL_PROP_SEED=random PATCHCTL_PROP_CASES=3000 $(GO) test -count=1 -run '^TestPlainDiffsGNU$$|^TestNewFileExistsGNU$$' ./internal/apply
	PATCHCTL_PROP_SEED=random PATCHCTL_PROP_CASES=500 $(GO) test -count=1 -run '^TestRenameCopyModeGitApply$$' ./internal/apply

# Figures (Go benchmarks): apply+refresh, tree prepare warm/cold, whole-tree
# check, builds no-op/patched-after-baseline, boot per transport, run warm
# after a patch edit. PATCHCTL_BENCH_COLD=1 adds the cold one-kernel run.
bench: build
	$(GO) test -run XXX -bench . -benchtime 3x ./...

clean:
	rm -rf bin out
