#!/usr/bin/env bash
# Installs what patchctl needs from Debian's packages, only when something
# is missing (a machine that has them all pays one dpkg query).
#   scripts/deps.sh          system tools for every stage
# The kernel sources are not installed here: `patchctl tree prepare` fetches
# the pinned linux-source .deb into the user's cache (through its own apt
# state per suite, signed-by debian-archive-keyring's keyring; the system's
# apt sources are never changed) and checks its sha256.
set -euo pipefail

pkgs=(git ca-certificates build-essential flex bison bc libelf-dev libssl-dev
      cpio ccache xz-utils qemu-system-x86 dpkg-dev patch perl
      # the kernel image's compressor (kconfig/base.config: KERNEL_LZ4)
      lz4
      # --kernel-from distro: BTF of modules rebuilt against Debian's headers
      pahole
      # the static shell and tools of patchctl boot --shell / --keep
      busybox-static
      # patchctl's own apt state: bullseye, sid and experimental lists are
      # verified against Debian's archive keyring
      debian-archive-keyring
      # the reports' reference validators (tests) and CI's JUnit summary:
      # xmllint, a JUnit consumer, JSON schema with its uri format
      libxml2-utils python3-junitparser python3-jsonschema python3-rfc3987
      # actionlint runs shellcheck on the workflow's run: scripts (make test)
      shellcheck
      # public-inbox's over.sqlite3 and msgmap.sqlite3, read with the
      # sqlite3 program (patch sources: a Message-ID in a local archive)
      sqlite3
      # the checks' second oracle: the core rules as Coccinelle scripts
      # (checks/coccinelle/*.cocci), spatch and make coccicheck
      coccinelle)
# Node.js and npm run the SARIF schema check and install the SARIF
# Multitool (@microsoft/sarif-multitool-linux, into the user's cache) in
# the tests; a machine that has its own node keeps it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  pkgs+=(nodejs npm)
fi

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    exit 0
  fi
  echo "deps: missing ${missing[*]}; run as root: apt-get update && apt-get install ${missing[*]}" >&2
  exit 2
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
