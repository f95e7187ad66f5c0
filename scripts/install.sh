#!/usr/bin/env bash
# Installs the built daemon and CLI into the system, or removes them (scripts/setup.sh install and
# uninstall run this; scripts/package.sh stages the Debian package with it):
#   <prefix>/lib/engine/            the runtime tree (scripts/stage-runtime.mjs: bundles, pinned Node, …)
#   <prefix>/bin/engined, engine    symlinks into it
#   <unitdir>/engine.service        Type=notify, ExecStart=<prefix>/bin/engined -H fd://
#   <unitdir>/engine.socket         /run/engine.sock, root:engine 0660 (socket activation)
#   <sysconfdir>/engine/daemon.json the default configuration (an existing one is kept)
#   the `engine` system group       owner group of the socket (the daemon warns when it is missing)
#   bash and zsh completion         when the CLI has `engine completion bash|zsh`
# Nothing is enabled or started: `systemctl enable --now engine.socket` does that.
#
# Usage: scripts/install.sh install|uninstall [--prefix /usr/local] [--sysconfdir /etc]
#          [--unitdir /etc/systemd/system] [--localstatedir /var] [--destdir DIR] [--no-group]
# The daemon's V8 code cache is <localstatedir>/cache/engine (uninstall removes it).
# --destdir stages everything under DIR (paths inside the files stay the final ones); the group is
# then made in DIR/etc/group when that file exists. --no-group leaves the group alone.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
action=${1:-}
shift || true
prefix=/usr/local sysconfdir=/etc unitdir=/etc/systemd/system localstatedir=/var destdir='' group=1
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=${2:?}; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --sysconfdir) sysconfdir=${2:?}; shift 2 ;;
    --sysconfdir=*) sysconfdir=${1#*=}; shift ;;
    --unitdir) unitdir=${2:?}; shift 2 ;;
    --unitdir=*) unitdir=${1#*=}; shift ;;
    --localstatedir) localstatedir=${2:?}; shift 2 ;;
    --localstatedir=*) localstatedir=${1#*=}; shift ;;
    --destdir) destdir=${2:?}; shift 2 ;;
    --destdir=*) destdir=${1#*=}; shift ;;
    --no-group) group=0; shift ;;
    *) echo "install: unknown option $1" >&2; exit 2 ;;
  esac
done
for p in "$prefix" "$sysconfdir" "$unitdir" "$localstatedir"; do
  case "$p" in /*) ;; *) echo "install: $p: give absolute paths" >&2; exit 2 ;; esac
done
[ -z "$destdir" ] || destdir=$(realpath -m "$destdir")
lib=$prefix/lib/engine
config=$sysconfdir/engine/daemon.json
D=$destdir
# Written only where systemd runs and nothing is staged.
systemd_running() { [ -z "$destdir" ] && [ -d /run/systemd/system ]; }
# What install made that uninstall must know (the group is never removed if it was there before).
state=$lib/install-state

service_unit() {
  local extra=''
  [ "$config" = /etc/engine/daemon.json ] || extra=" --config-file $config"
  cat <<EOF
# engine.service: the engine daemon (engined), serving the Docker Engine API on the sockets of
# engine.socket. Written by engine's scripts/install.sh.
[Unit]
Description=engine container engine (Docker Engine API on containerd)
After=network-online.target nss-lookup.target firewalld.service time-set.target engine.socket
Wants=network-online.target
Requires=engine.socket
StartLimitBurst=3
StartLimitIntervalSec=60

[Service]
# The daemon sends READY=1 over \$NOTIFY_SOCKET once its API serves, STOPPING=1 when it stops.
Type=notify
ExecStart=$prefix/bin/engined -H fd://$extra
ExecReload=/bin/kill -s HUP \$MAINPID
TimeoutStartSec=120
Restart=on-failure
RestartSec=2
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
# Containers' cgroups are the daemon's to manage, and only the daemon is signalled at stop: it
# stops its containerd and the containers itself (or leaves them running with live-restore).
Delegate=yes
KillMode=process
OOMScoreAdjust=-500

[Install]
WantedBy=multi-user.target
EOF
}

socket_unit() {
  cat <<EOF
# engine.socket: the engine API socket; the first connection starts engine.service, which takes
# the socket over (-H fd://). Written by engine's scripts/install.sh.
[Unit]
Description=engine API socket

[Socket]
ListenStream=/run/engine.sock
SocketMode=0660
SocketUser=root
SocketGroup=engine

[Install]
WantedBy=sockets.target
EOF
}

# The default configuration: every option at its default (engined --help lists them, with the
# daemon.json keys); an empty object keeps command-line flags free of conflicts with the file.
default_config() { printf '{}\n'; }

make_group() {
  [ "$group" = 1 ] || return 0
  if [ -z "$destdir" ]; then
    if getent group engine >/dev/null; then echo "install: group engine exists"; return 0; fi
    groupadd --system engine
  elif [ -f "$D/etc/group" ]; then
    if grep -q '^engine:' "$D/etc/group"; then echo "install: group engine exists in $D"; return 0; fi
    groupadd --system --prefix "$D" engine
  else
    echo "install: $D/etc/group missing: the engine group is not created"
    return 0
  fi
  echo "group-created" >>"$D$state"
  echo "install: created the system group engine"
}

# The directories under $1 that do not exist yet, outermost first.
missing_dirs() {
  local d=$1 up=()
  while [ "$d" != / ] && [ ! -d "$D$d" ]; do up=("$d" "${up[@]}"); d=$(dirname "$d"); done
  [ ${#up[@]} -eq 0 ] || printf '%s\n' "${up[@]}"
}

# Makes a directory, recording in the state file the ones it creates (uninstall removes them).
make_dir() {
  local d
  for d in $(missing_dirs "$1"); do grep -qxF "dir $d" "$D$state" || echo "dir $d" >>"$D$state"; done
  install -d "$D$1"
}

# Shell completion from the CLI's command table, when the CLI has it (engine completion bash|zsh).
install_completions() {
  local home shell file
  home=$(mktemp -d)
  for shell in bash zsh; do
    case $shell in
      bash) file=$prefix/share/bash-completion/completions/engine ;;
      zsh) # Debian's zsh reads a package's completions from vendor-completions, a local one's from site-functions
        if [ "$prefix" = /usr ]; then file=/usr/share/zsh/vendor-completions/_engine; else file=$prefix/share/zsh/site-functions/_engine; fi ;;
    esac
    if HOME=$home XDG_CACHE_HOME=$home/.cache "$D$lib/bin/engine" completion "$shell" >"$home/out" 2>/dev/null && [ -s "$home/out" ]; then
      make_dir "$(dirname "$file")"
      install -m 0644 "$home/out" "$D$file"
      echo "file $file" >>"$D$state"
    fi
  done
  rm -rf "$home"
}

do_install() {
  [ -f dist/bundle/engined.js ] || { echo "install: build first (scripts/setup.sh or npm run build)" >&2; exit 1; }
  [ -z "$destdir" ] || mkdir -p "$destdir"
  local libdirs kept=''
  libdirs=$(missing_dirs "$lib")
  # A reinstall replaces the runtime tree; what the earlier install recorded is kept.
  [ -f "$D$state" ] && kept=$(cat "$D$state")
  rm -rf "$D$lib"
  bin/node scripts/stage-runtime.mjs "$D$lib" "$localstatedir"
  [ -z "$kept" ] || printf '%s\n' "$kept" | grep -v '^file ' >"$D$state" || true # only dir and group lines
  touch "$D$state"
  for d in $libdirs; do echo "dir $d" >>"$D$state"; done
  make_dir "$prefix/bin"
  make_dir "$unitdir"
  make_dir "$sysconfdir/engine"
  ln -sfn "../lib/engine/bin/engined" "$D$prefix/bin/engined"
  ln -sfn "../lib/engine/bin/engine" "$D$prefix/bin/engine"
  service_unit >"$D$unitdir/engine.service"
  socket_unit >"$D$unitdir/engine.socket"
  chmod 0644 "$D$unitdir/engine.service" "$D$unitdir/engine.socket"
  if [ -e "$D$config" ]; then
    echo "install: $config exists: kept"
  else
    default_config >"$D$config"
    chmod 0644 "$D$config"
  fi
  install_completions
  make_group
  if systemd_running; then systemctl daemon-reload; fi
  echo "install: engined and engine in $prefix/bin, units in $unitdir, configuration $config"
  [ -n "$destdir" ] || echo "install: start it with: systemctl enable --now engine.socket"
}

do_uninstall() {
  if systemd_running; then
    systemctl disable --now engine.socket engine.service 2>/dev/null || true # not enabled or not running: nothing to undo
  fi
  local created_group=0 made=() files=() f
  if [ -f "$D$state" ]; then
    grep -qx group-created "$D$state" && created_group=1
    mapfile -t made < <(sed -n 's/^dir //p' "$D$state")
    mapfile -t files < <(sed -n 's/^file //p' "$D$state")
  fi
  for l in engined engine; do
    if [ -L "$D$prefix/bin/$l" ] && [ "$(readlink "$D$prefix/bin/$l")" = "../lib/engine/bin/$l" ]; then rm -f "$D$prefix/bin/$l"; fi
  done
  rm -f "$D$unitdir/engine.service" "$D$unitdir/engine.socket"
  for f in "${files[@]}"; do rm -f "$D$f"; done
  rm -rf "$D$lib" "$D$localstatedir/cache/engine" # the daemon's code cache (bin/engined)
  # The configuration goes only as installed; an edited one stays (as dpkg keeps a changed conffile).
  if [ -f "$D$config" ]; then
    if [ "$(cat "$D$config")" = "$(default_config)" ]; then rm -f "$D$config"; else echo "uninstall: $config was changed: kept"; fi
  fi
  if [ "$created_group" = 1 ] && [ "$group" = 1 ]; then
    if [ -z "$destdir" ]; then groupdel engine; else groupdel --prefix "$D" engine; fi
    echo "uninstall: removed the group engine"
  fi
  if systemd_running; then systemctl daemon-reload; fi
  # The directories install made, deepest first, when nothing else was put in them since.
  local i
  for ((i = ${#made[@]} - 1; i >= 0; i--)); do rmdir "$D${made[i]}" 2>/dev/null || true; done # not empty: kept
  echo "uninstall: done (containers, images and volumes in /var/lib/engine are left)"
}

case "$action" in
  install) do_install ;;
  uninstall) do_uninstall ;;
  *) echo "usage: scripts/install.sh install|uninstall [--prefix DIR] [--sysconfdir DIR] [--unitdir DIR] [--destdir DIR] [--no-group]" >&2; exit 2 ;;
esac
