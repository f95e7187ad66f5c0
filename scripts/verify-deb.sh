#!/usr/bin/env bash
# Installs the Debian package into a fresh Debian 12 root and uses it there: the check that the
# package's Depends are complete and that what it installs runs on a machine that has nothing else.
#   1. debootstrap --variant=minbase bookworm into a temporary root (from the host's apt mirror);
#   2. scripts/package.sh, then `apt-get install ./engine_*.deb` inside that root;
#   3. in a private network and mount namespace, chroot into it, start `engined` with the packaged
#      defaults, import a busybox root filesystem, `engine run --rm`, a detached container with a
#      published port, `engine ps`, then stop the daemon;
#   4. with --boot (needs the host package systemd-container): the same root booted by
#      systemd-nspawn with systemd as PID 1 and engine.socket enabled; the first `engine version`
#      activates engine.service through the socket and the unit must reach `active` (Type=notify:
#      the daemon's READY=1), then stop cleanly. Containers are not run there: nspawn mounts the
#      cgroup v1 controllers read-only.
# Not part of the test command (it downloads a base system, ~2 minutes); run it as root on Debian 12:
#   bash scripts/verify-deb.sh [--boot] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
boot=0 keep=0
for a in "$@"; do
  case $a in
    --boot) boot=1 ;;
    --keep) keep=1 ;;
    *) echo "usage: scripts/verify-deb.sh [--boot] [--keep]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "verify-deb: run as root" >&2; exit 2; }
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
[ $boot = 0 ] || command -v systemd-nspawn >/dev/null || apt-get install -y -qq systemd-container >/dev/null

work=$(mktemp -d /tmp/verify-deb.XXXXXX)
root=$work/root
cleanup() {
  pkill -f "systemd-nspawn .*-D $root" 2>/dev/null || true
  if [ $keep = 0 ]; then rm -rf --one-file-system "$work"; else echo "verify-deb: kept $work"; fi
}
trap cleanup EXIT
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
step() { printf '\n== %s\n' "$*"; }

step "debootstrap bookworm (minbase) ${mirror:+from $mirror}"
debootstrap --variant=minbase bookworm "$root" ${mirror:+"$mirror"} >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log"; exit 1; }

step "package"
deb=$(ENGINE_DEB_COMPRESSION=gzip bash scripts/package.sh "$work/deb" | tail -1)
cp "$deb" "$root/tmp/"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

step "apt-get install ./$(basename "$deb")"
chroot "$root" env DEBIAN_FRONTEND=noninteractive bash -c \
  "apt-get update -qq && apt-get install -y -qq /tmp/$(basename "$deb") busybox-static" >"$work/apt.log" 2>&1 ||
  { tail -30 "$work/apt.log"; exit 1; }
ls -l "$root/usr/bin/engine" "$root/usr/bin/engined" "$root/lib/systemd/system/engine.service" \
  "$root/lib/systemd/system/engine.socket" "$root/etc/engine/daemon.json"
grep -q '^engine:' "$root/etc/group" || { echo "verify-deb: no engine group" >&2; exit 1; }

cat >"$root/root/run-chroot.sh" <<'EOF'
set -euo pipefail
ip link set lo up
engined >/tmp/engined.log 2>&1 &
trap 'kill %1 2>/dev/null || true' EXIT
for _ in $(seq 1 150); do engine version >/dev/null 2>&1 && break; sleep 0.2; done
engine version --format 'server {{.Server.Version}}, {{range .Server.Components}}{{.Name}} {{.Version}}; {{end}}'
mkdir -p /tmp/bb/bin && cp /bin/busybox /tmp/bb/bin/ && for a in sh echo sleep; do ln -sf busybox /tmp/bb/bin/$a; done
tar -C /tmp/bb -c . | engine import - bb:1 >/dev/null
out=$(engine run --rm bb:1 echo hello-from-the-package)
[ "$out" = hello-from-the-package ] || { echo "run printed: $out" >&2; exit 1; }
echo "run: $out"
engine run -d --name web -p 8080:80 bb:1 sleep 60 >/dev/null
engine ps --format '{{.Names}} {{.Status}} {{.Ports}}'
engine rm -f web >/dev/null
kill %1
wait || true
grep -c 'level=error' /tmp/engined.log | sed 's/^/error lines in the daemon log: /' || true
EOF
step "run in the fresh root (chroot, own network and mount namespaces)"
# runc needs the root to be a mount point (it makes / a slave mount): bind the root onto itself.
unshare --net --mount --fork bash -c "
  mount --make-rprivate /
  mount --rbind '$root' '$root'
  mount -t proc proc '$root/proc'
  mount --rbind /sys '$root/sys'
  mount --rbind /dev '$root/dev'
  mount -t tmpfs tmpfs '$root/run'
  chroot '$root' bash /root/run-chroot.sh"

if [ $boot = 1 ]; then
  step "boot the root with systemd as PID 1 (systemd-nspawn), engine.socket enabled"
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd systemd-sysv dbus >>"$work/apt.log" 2>&1
  chroot "$root" systemctl enable engine.socket
  cat >"$root/root/run-boot.sh" <<'EOF'
set -euo pipefail
for _ in $(seq 1 100); do [ "$(systemctl is-active engine.socket)" = active ] && break; sleep 0.3; done
echo "before: socket $(systemctl is-active engine.socket), service $(systemctl is-active engine.service || true)"
engine version --format 'activated: server {{.Server.Version}}'
systemctl show engine.service -p Type -p ActiveState -p SubState -p MainPID
systemctl stop engine.service engine.socket
systemctl show engine.service -p ActiveState -p Result
EOF
  SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=0 setsid systemd-nspawn -b -D "$root" --private-network --register=no \
    --keep-unit --console=read-only --machine=verify-deb >"$work/nspawn.log" 2>&1 &
  leader=
  for _ in $(seq 1 100); do
    ns=$(pgrep -f "systemd-nspawn .*-D $root" | head -1 || true)
    [ -n "$ns" ] && leader=$(pgrep -P "$ns" | head -1 || true)
    [ -n "$leader" ] && nsenter -t "$leader" -a systemctl is-system-running >/dev/null 2>&1 && break
    sleep 0.3
  done
  [ -n "$leader" ] || { tail -20 "$work/nspawn.log"; exit 1; }
  sleep 2
  nsenter -t "$leader" -a bash /root/run-boot.sh
fi
step "ok"
