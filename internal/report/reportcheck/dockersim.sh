#!/bin/bash
# docker, as far as scripts/ci/container uses it, over a chroot: the
# workflow simulation (TestJobImageWorkflow, make test-ci-e2e) puts it on
# PATH as `docker`. The one image, debian:bookworm, is the job-image
# test's bookworm root filesystem ($DOCKER_SIM_ROOTFS); a container is its
# options, kept in $DOCKER_SIM_STATE/NAME, and every `docker exec` runs in
# a mount and PID namespace of its own with what docker would give it:
# the -v binds (host folders made when missing, :ro honoured), the -e
# variables (a bare NAME takes the caller's value), /proc, /sys, a /dev
# of its own with docker's nodes (null zero full random urandom tty, pts,
# a 64 MB /dev/shm) and only the --device nodes beside them, the -w
# folder, and the image's PATH and HOME unless -e sets them.
#   docker run -d --name N [-v SRC:DST[:ro]] [-w DIR] [-e K[=V]] [--device DEV] debian:bookworm CMD...
#   docker exec [-e K[=V]] N CMD...
#   docker rm -f N
set -euo pipefail
state=${DOCKER_SIM_STATE:?docker simulation: DOCKER_SIM_STATE unset}
rootfs=${DOCKER_SIM_ROOTFS:?docker simulation: DOCKER_SIM_ROOTFS unset}
unsupported() { echo "docker (simulation): unsupported: $*" >&2; exit 125; }
# envline K[=V]: K=V, or K=<caller's value> when set (docker's -e K)
envline() {
  case "$1" in
    *=*) printf '%s\n' "$1" ;;
    *) if [ -n "${!1+x}" ]; then printf '%s=%s\n' "$1" "${!1}"; fi ;;
  esac
}
sub=${1:-}
[ $# -gt 0 ] && shift
case "$sub" in
  run)
    name='' workdir=/ detach=''
    mounts=() envs=() devs=()
    while [ $# -gt 0 ]; do
      case "$1" in
        -d) detach=1; shift ;;
        --name) name=$2; shift 2 ;;
        -v) mounts+=("$2"); shift 2 ;;
        -w) workdir=$2; shift 2 ;;
        -e) envs+=("$2"); shift 2 ;;
        --device) devs+=("$2"); shift 2 ;;
        -*) unsupported "run option $1" ;;
        *) break ;;
      esac
    done
    [ "${1:-}" = debian:bookworm ] || unsupported "image ${1:-none} (only debian:bookworm)"
    if [ -z "$detach" ] || [ -z "$name" ]; then unsupported "run without -d --name"; fi
    d=$state/$name
    if [ -e "$d" ]; then
      echo "docker: Error response from daemon: Conflict. The container name \"/$name\" is already in use." >&2
      exit 125
    fi
    for m in "${mounts[@]}"; do
      src=${m%%:*}
      [ "${src#/}" != "$src" ] || unsupported "-v $m (a named volume)"
      mkdir -p "$src"
    done
    for dev in "${devs[@]}"; do
      [ -e "$dev" ] || { echo "docker: Error response from daemon: error gathering device information while adding custom device \"$dev\": no such file or directory." >&2; exit 125; }
    done
    mkdir -p "$d"
    { for m in "${mounts[@]}"; do printf '%s\n' "$m"; done; } >"$d/mounts"
    { for e in "${envs[@]}"; do envline "$e"; done; } >"$d/env"
    { for dev in "${devs[@]}"; do printf '%s\n' "$dev"; done; } >"$d/devices"
    printf '%s\n' "$workdir" >"$d/workdir"
    echo "$name"
    ;;
  exec)
    envs=()
    while [ $# -gt 0 ]; do
      case "$1" in
        -e) envs+=("$2"); shift 2 ;;
        -*) unsupported "exec option $1" ;;
        *) break ;;
      esac
    done
    name=${1:?docker exec: no container}
    shift
    [ $# -gt 0 ] || unsupported "exec without a command"
    d=$state/$name
    [ -d "$d" ] || { echo "Error response from daemon: No such container: $name" >&2; exit 1; }
    # the image's environment, then run's -e, then exec's -e (later wins
    # in env(1))
    env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root HOSTNAME="$name")
    mapfile -t more <"$d/env"
    env+=("${more[@]}")
    for e in "${envs[@]}"; do
      l=$(envline "$e")
      [ -z "$l" ] || env+=("$l")
    done
    workdir=$(cat "$d/workdir")
    exec unshare --mount --pid --fork /bin/bash -c '
      set -euo pipefail
      r=$1 d=$2 workdir=$3 n=$4
      shift 4
      env=("${@:1:$n}")
      shift "$n"
      mount --make-rprivate /
      mount -t proc proc "$r/proc"
      mount --rbind /sys "$r/sys"
      mount -o remount,bind,ro "$r/sys" 2>/dev/null || true
      mount -t tmpfs -o mode=755,size=65536k tmpfs "$r/dev"
      for node in null zero full random urandom tty; do
        touch "$r/dev/$node"
        mount --bind "/dev/$node" "$r/dev/$node"
      done
      mkdir "$r/dev/pts" "$r/dev/shm"
      mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$r/dev/pts"
      ln -s pts/ptmx "$r/dev/ptmx"
      mount -t tmpfs -o mode=1777,size=65536k shm "$r/dev/shm"
      ln -s /proc/self/fd "$r/dev/fd"
      ln -s /proc/self/fd/0 "$r/dev/stdin"
      ln -s /proc/self/fd/1 "$r/dev/stdout"
      ln -s /proc/self/fd/2 "$r/dev/stderr"
      while IFS= read -r dev; do
        touch "$r$dev"
        mount --bind "$dev" "$r$dev"
      done <"$d/devices"
      while IFS= read -r m; do
        src=${m%%:*} rest=${m#*:}
        dst=${rest%%:*} opt=""
        [ "$dst" = "$rest" ] || opt=${rest#*:}
        if [ -d "$src" ]; then mkdir -p "$r$dst"; else mkdir -p "$(dirname "$r$dst")"; touch "$r$dst"; fi
        mount --bind "$src" "$r$dst"
        if [ "$opt" = ro ]; then mount -o remount,bind,ro "$r$dst"; fi
      done <"$d/mounts"
      exec chroot "$r" /usr/bin/env -i "${env[@]}" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$workdir" "$@"
    ' sh "$rootfs" "$d" "$workdir" "${#env[@]}" "${env[@]}" "$@"
    ;;
  rm)
    [ "${1:-}" = -f ] || unsupported "rm without -f"
    shift
    for n in "$@"; do rm -rf "${state:?}/$n"; done
    ;;
  *) unsupported "docker ${sub:-without a command}" ;;
esac
