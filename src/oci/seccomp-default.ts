// The built-in seccomp profile: an allow list with EPERM for everything else, in effect what
// Docker's default profile does. It blocks what lets a container reach beyond its namespaces —
// creating namespaces (clone/unshare with CLONE_NEW*), mounting, loading modules, kexec, the kernel
// keyring, bpf/perf, io_uring, clock setting, reboot — unless the container holds the capability
// that would make the call legitimate (the conditional rules below, resolved per container).
//
// Written from the syscall tables, not copied from moby's JSON.

import type { DockerSeccompProfile, DockerSeccompRule, SeccompContext } from './seccomp.ts';
import { seccompFromProfile } from './seccomp.ts';
import type { LinuxSeccomp } from './spec-types.ts';

const EPERM = 1;
const ENOSYS = 38;

// Namespace-creating clone flags: NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET.
export const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;

/** Calls any process needs: files, memory, signals, time reading, sockets, IPC, scheduling. */
const ALWAYS_ALLOWED: readonly string[] = [
  // files and directories
  'access', 'faccessat', 'faccessat2', 'chdir', 'fchdir', 'getcwd', 'chmod', 'fchmod', 'fchmodat', 'fchmodat2',
  'chown', 'chown32', 'fchown', 'fchown32', 'fchownat', 'lchown', 'lchown32', 'close', 'close_range', 'creat',
  'open', 'openat', 'openat2', 'read', 'readv', 'pread64', 'preadv', 'preadv2', 'write', 'writev', 'pwrite64',
  'pwritev', 'pwritev2', 'lseek', '_llseek', 'dup', 'dup2', 'dup3', 'fcntl', 'fcntl64', 'flock', 'fsync',
  'fdatasync', 'sync', 'syncfs', 'sync_file_range', 'truncate', 'truncate64', 'ftruncate', 'ftruncate64',
  'fallocate', 'fadvise64', 'fadvise64_64', 'readahead', 'stat', 'stat64', 'lstat', 'lstat64', 'fstat', 'fstat64',
  'fstatat64', 'newfstatat', 'statx', 'statfs', 'statfs64', 'fstatfs', 'fstatfs64', 'getdents', 'getdents64',
  'link', 'linkat', 'unlink', 'unlinkat', 'symlink', 'symlinkat', 'readlink', 'readlinkat', 'rename', 'renameat',
  'renameat2', 'mkdir', 'mkdirat', 'rmdir', 'mknod', 'mknodat', 'umask', 'utime', 'utimes', 'utimensat',
  'utimensat_time64', 'futimesat', 'getxattr', 'lgetxattr', 'fgetxattr', 'setxattr', 'lsetxattr', 'fsetxattr',
  'listxattr', 'llistxattr', 'flistxattr', 'removexattr', 'lremovexattr', 'fremovexattr', 'sendfile', 'sendfile64',
  'splice', 'tee', 'vmsplice', 'copy_file_range', 'name_to_handle_at', 'ioctl', 'inotify_init', 'inotify_init1',
  'inotify_add_watch', 'inotify_rm_watch', 'fanotify_mark', 'cachestat',
  // polling and event fds
  'select', '_newselect', 'pselect6', 'pselect6_time64', 'poll', 'ppoll', 'ppoll_time64', 'epoll_create',
  'epoll_create1', 'epoll_ctl', 'epoll_ctl_old', 'epoll_wait', 'epoll_wait_old', 'epoll_pwait', 'epoll_pwait2',
  'eventfd', 'eventfd2', 'signalfd', 'signalfd4', 'timerfd_create', 'timerfd_settime', 'timerfd_settime64',
  'timerfd_gettime', 'timerfd_gettime64', 'pipe', 'pipe2',
  // asynchronous I/O (not io_uring)
  'io_setup', 'io_destroy', 'io_submit', 'io_cancel', 'io_getevents', 'io_pgetevents', 'io_pgetevents_time64',
  'ioprio_get', 'ioprio_set',
  // memory
  'brk', 'mmap', 'mmap2', 'munmap', 'mremap', 'mprotect', 'madvise', 'mincore', 'msync', 'mlock', 'mlock2',
  'mlockall', 'munlock', 'munlockall', 'membarrier', 'memfd_create', 'memfd_secret', 'remap_file_pages',
  'pkey_alloc', 'pkey_free', 'pkey_mprotect', 'map_shadow_stack',
  // processes and threads
  'execve', 'execveat', 'exit', 'exit_group', 'fork', 'vfork', 'wait4', 'waitid', 'waitpid', 'getpid', 'getppid',
  'gettid', 'getpgid', 'setpgid', 'getpgrp', 'getsid', 'setsid', 'set_tid_address', 'set_robust_list',
  'get_robust_list', 'futex', 'futex_time64', 'futex_waitv', 'futex_wait', 'futex_wake', 'futex_requeue', 'rseq',
  'restart_syscall', 'prctl', 'arch_prctl', 'capget', 'capset', 'getrlimit', 'ugetrlimit', 'setrlimit',
  'prlimit64', 'getrusage', 'getpriority', 'setpriority', 'sched_yield', 'sched_getaffinity', 'sched_setaffinity',
  'sched_getattr', 'sched_setattr', 'sched_getparam', 'sched_setparam', 'sched_getscheduler', 'sched_setscheduler',
  'sched_get_priority_max', 'sched_get_priority_min', 'sched_rr_get_interval', 'sched_rr_get_interval_time64',
  'getcpu', 'get_thread_area', 'set_thread_area', 'seccomp', 'pidfd_open', 'pidfd_send_signal', 'process_mrelease',
  'landlock_create_ruleset', 'landlock_add_rule', 'landlock_restrict_self',
  // credentials
  'getuid', 'getuid32', 'geteuid', 'geteuid32', 'getgid', 'getgid32', 'getegid', 'getegid32', 'getresuid',
  'getresuid32', 'getresgid', 'getresgid32', 'getgroups', 'getgroups32', 'setuid', 'setuid32', 'setgid',
  'setgid32', 'setreuid', 'setreuid32', 'setregid', 'setregid32', 'setresuid', 'setresuid32', 'setresgid',
  'setresgid32', 'setgroups', 'setgroups32', 'setfsuid', 'setfsuid32', 'setfsgid', 'setfsgid32',
  // signals
  'kill', 'tkill', 'tgkill', 'rt_sigaction', 'rt_sigprocmask', 'rt_sigreturn', 'rt_sigpending', 'rt_sigsuspend',
  'rt_sigtimedwait', 'rt_sigtimedwait_time64', 'rt_sigqueueinfo', 'rt_tgsigqueueinfo', 'sigaltstack',
  'sigprocmask', 'sigreturn', 'pause', 'alarm',
  // time (reading; adjtimex changes the clock only with CAP_SYS_TIME, checked by the kernel) and timers
  'adjtimex', 'clock_adjtime', 'clock_adjtime64', 'time', 'gettimeofday', 'clock_gettime', 'clock_gettime64', 'clock_getres', 'clock_getres_time64',
  'clock_nanosleep', 'clock_nanosleep_time64', 'nanosleep', 'times', 'getitimer', 'setitimer', 'timer_create',
  'timer_delete', 'timer_getoverrun', 'timer_gettime', 'timer_gettime64', 'timer_settime', 'timer_settime64',
  // networking
  'socket', 'socketpair', 'socketcall', 'bind', 'listen', 'accept', 'accept4', 'connect', 'getsockname',
  'getpeername', 'getsockopt', 'setsockopt', 'shutdown', 'send', 'sendto', 'sendmsg', 'sendmmsg', 'recv',
  'recvfrom', 'recvmsg', 'recvmmsg', 'recvmmsg_time64',
  // System V and POSIX IPC (namespaced by the IPC namespace)
  'ipc', 'msgget', 'msgsnd', 'msgrcv', 'msgctl', 'semget', 'semop', 'semtimedop', 'semtimedop_time64', 'semctl',
  'shmget', 'shmat', 'shmdt', 'shmctl', 'mq_open', 'mq_unlink', 'mq_timedsend', 'mq_timedsend_time64',
  'mq_timedreceive', 'mq_timedreceive_time64', 'mq_notify', 'mq_getsetattr',
  // system information
  'uname', 'sysinfo', 'getrandom',
];

/** Debugging another process of the same container: allowed since kernel 4.8 fixed the seccomp bypass. */
const PTRACE_FAMILY = ['ptrace', 'kcmp', 'process_vm_readv', 'process_vm_writev', 'pidfd_getfd'];

/** personality(2) values that only change the emulated ABI/uname, never security properties. */
const SAFE_PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

/** Calls that are legitimate only with the given capability. */
const BY_CAPABILITY: readonly [string, readonly string[]][] = [
  ['CAP_SYS_ADMIN', ['mount', 'umount', 'umount2', 'mount_setattr', 'move_mount', 'open_tree', 'fsopen', 'fsconfig',
    'fsmount', 'fspick', 'pivot_root', 'unshare', 'setns', 'sethostname', 'setdomainname', 'quotactl', 'quotactl_fd',
    'lookup_dcookie', 'fanotify_init', 'syslog', 'bpf', 'perf_event_open', 'clone', 'clone3']],
  ['CAP_SYS_BOOT', ['reboot']],
  ['CAP_SYS_CHROOT', ['chroot']],
  ['CAP_SYS_MODULE', ['init_module', 'finit_module', 'delete_module']],
  ['CAP_SYS_PACCT', ['acct']],
  ['CAP_SYS_PTRACE', [...PTRACE_FAMILY, 'process_madvise', 'userfaultfd']],
  ['CAP_SYS_RAWIO', ['iopl', 'ioperm']],
  ['CAP_SYS_TIME', ['settimeofday', 'stime', 'clock_settime', 'clock_settime64']],
  ['CAP_SYS_TTY_CONFIG', ['vhangup']],
  ['CAP_SYS_NICE', ['get_mempolicy', 'set_mempolicy', 'set_mempolicy_home_node', 'mbind', 'migrate_pages', 'move_pages']],
  ['CAP_SYSLOG', ['syslog']],
  ['CAP_BPF', ['bpf']],
  ['CAP_PERFMON', ['perf_event_open']],
  ['CAP_DAC_READ_SEARCH', ['open_by_handle_at']],
];

function defaultProfileDocument(): DockerSeccompProfile {
  const rules: DockerSeccompRule[] = [{ names: [...ALWAYS_ALLOWED], action: 'SCMP_ACT_ALLOW' }];

  rules.push({ names: PTRACE_FAMILY, action: 'SCMP_ACT_ALLOW', includes: { minKernel: '4.8' } });
  for (const value of SAFE_PERSONALITIES) {
    rules.push({ names: ['personality'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value, op: 'SCMP_CMP_EQ' }] });
  }

  // Architecture-specific calls.
  rules.push({ names: ['modify_ldt'], action: 'SCMP_ACT_ALLOW', includes: { arches: ['amd64', 'x32', '386'] } });
  rules.push({
    names: ['arm_fadvise64_64', 'arm_sync_file_range', 'sync_file_range2', 'breakpoint', 'cacheflush', 'set_tls'],
    action: 'SCMP_ACT_ALLOW',
    includes: { arches: ['arm', 'arm64'] },
  });

  // Without CAP_SYS_ADMIN: clone only without namespace flags; clone3 reports ENOSYS so libc falls
  // back to clone, whose flags (unlike clone3's, passed in memory) seccomp can inspect.
  rules.push({
    names: ['clone'],
    action: 'SCMP_ACT_ALLOW',
    args: [{ index: 0, value: CLONE_NAMESPACE_FLAGS, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
    excludes: { caps: ['CAP_SYS_ADMIN'], arches: ['s390', 's390x'] },
  });
  rules.push({ names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS, excludes: { caps: ['CAP_SYS_ADMIN'] } });

  for (const [cap, names] of BY_CAPABILITY) {
    rules.push({ names: [...names], action: 'SCMP_ACT_ALLOW', includes: { caps: [cap] } });
  }

  return {
    defaultAction: 'SCMP_ACT_ERRNO',
    defaultErrnoRet: EPERM,
    archMap: [
      { architecture: 'SCMP_ARCH_X86_64', subArchitectures: ['SCMP_ARCH_X86', 'SCMP_ARCH_X32'] },
      { architecture: 'SCMP_ARCH_X86', subArchitectures: [] },
      { architecture: 'SCMP_ARCH_AARCH64', subArchitectures: ['SCMP_ARCH_ARM'] },
      { architecture: 'SCMP_ARCH_ARM', subArchitectures: [] },
    ],
    syscalls: rules,
  };
}

/** The built-in profile in Docker's JSON format (for `docker info`-style display or export). */
export function defaultSeccompDocument(): DockerSeccompProfile {
  return defaultProfileDocument();
}

/**
 * The built-in profile resolved for a container with these capabilities (CAP_-prefixed names; the
 * conditional rules follow them like Docker's `includes.caps`).
 */
export function defaultSeccompProfile(capabilities: readonly string[], context: Omit<SeccompContext, 'capabilities'> = {}): LinuxSeccomp {
  return seccompFromProfile(defaultProfileDocument(), { ...context, capabilities });
}
