// The docker CLI's usage lines, descriptions and flags of engine commit, diff, export, import,
// update and search (the commands are in containers-extra.ts).
import type { SpecText } from './spec-text.ts';

export const OTHER_TEXT = {
  commit: {
    usage: '[OPTIONS] CONTAINER [REPOSITORY[:TAG]]',
    description: "Create a new image from a container's changes",
    flags: [
      { name: 'author', short: 'a', kind: 'string', description: 'Author (e.g., \"John Hannibal Smith <hannibal@a-team.com>\")' },
      { name: 'change', short: 'c', kind: 'list', description: 'Apply Dockerfile instruction to the created image' },
      { name: 'message', short: 'm', kind: 'string', description: 'Commit message' },
      { name: 'pause', short: 'p', kind: 'bool', description: 'Pause container during commit (default true)' },
    ],
  },
  diff: {
    usage: 'CONTAINER',
    description: "Inspect changes to files or directories on a container's filesystem",
    flags: [],
  },
  export: {
    usage: '[OPTIONS] CONTAINER',
    description: "Export a container's filesystem as a tar archive",
    flags: [{ name: 'output', short: 'o', kind: 'string', description: 'Write to a file, instead of STDOUT' }],
  },
  import: {
    usage: '[OPTIONS] file|URL|- [REPOSITORY[:TAG]]',
    description: 'Import the contents from a tarball to create a filesystem image',
    flags: [
      { name: 'change', short: 'c', kind: 'list', description: 'Apply Dockerfile instruction to the created image' },
      { name: 'message', short: 'm', kind: 'string', description: 'Set commit message for imported image' },
      { name: 'platform', kind: 'string', description: 'Set platform if server is multi-platform capable' },
    ],
  },
  update: {
    usage: '[OPTIONS] CONTAINER [CONTAINER...]',
    description: 'Update configuration of one or more containers',
    flags: [
      { name: 'blkio-weight', kind: 'int', description: 'Block IO (relative weight), between 10 and 1000, or 0 to disable (default 0)' },
      { name: 'cpu-period', kind: 'int', description: 'Limit CPU CFS (Completely Fair Scheduler) period' },
      { name: 'cpu-quota', kind: 'int', description: 'Limit CPU CFS (Completely Fair Scheduler) quota' },
      { name: 'cpu-rt-period', kind: 'int', description: 'Limit the CPU real-time period in microseconds' },
      { name: 'cpu-rt-runtime', kind: 'int', description: 'Limit the CPU real-time runtime in microseconds' },
      { name: 'cpu-shares', short: 'c', kind: 'int', description: 'CPU shares (relative weight)' },
      { name: 'cpus', kind: 'string', description: 'Number of CPUs' },
      { name: 'cpuset-cpus', kind: 'string', description: 'CPUs in which to allow execution (0-3, 0,1)' },
      { name: 'cpuset-mems', kind: 'string', description: 'MEMs in which to allow execution (0-3, 0,1)' },
      { name: 'memory', short: 'm', kind: 'string', description: 'Memory limit' },
      { name: 'memory-reservation', kind: 'string', description: 'Memory soft limit' },
      { name: 'memory-swap', kind: 'string', description: 'Swap limit equal to memory plus swap: -1 to enable unlimited swap' },
      { name: 'pids-limit', kind: 'int', description: 'Tune container pids limit (set -1 for unlimited)' },
      { name: 'restart', kind: 'string', description: 'Restart policy to apply when a container exits' },
    ],
  },
  search: {
    usage: '[OPTIONS] TERM',
    description: 'Search Docker Hub for images',
    flags: [
      { name: 'filter', short: 'f', kind: 'list', description: 'Filter output based on conditions provided' },
      { name: 'format', kind: 'string', description: 'Pretty-print search using a Go template' },
      { name: 'limit', kind: 'int', description: 'Max number of search results' },
      { name: 'no-trunc', kind: 'bool', description: "Don't truncate output" },
    ],
  },
} satisfies Record<string, SpecText>;
