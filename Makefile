# patchctl: the two commands in README.md are `make run` and `make test`.
GO      ?= go
BIN     := bin/patchctl
KERNEL  ?= 6.12

.PHONY: all deps build run test vet fuzz bench clean

all: build

deps:
	@scripts/deps.sh

build:
	$(GO) build -o $(BIN) ./cmd/patchctl

# The main job on the default kernel: import the series of record, prepare
# the pinned tree, apply with dispositions, check the regenerated patches.
run: deps build
	$(BIN) import --out out/import patches/*
	$(BIN) tree prepare --kernel $(KERNEL)
	$(BIN) apply --kernel $(KERNEL)
	$(BIN) refresh --check --kernel $(KERNEL)

# Static checks and every test (the real kernel trees are prepared by the
# tests themselves, cached under the user's cache dir).
test: deps vet
	$(GO) test -count=1 -timeout 60m ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

fuzz:
	$(GO) test -run XXX -fuzz FuzzImport -fuzztime 60s ./internal/mailpatch

# Figures: apply+refresh of all series, tree prepare warm and cold.
bench: build
	$(GO) test -run XXX -bench . -benchtime 3x ./...

clean:
	rm -rf bin out
