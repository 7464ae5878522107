//go:build linux

package main

import "golang.org/x/sys/unix"

// nondumpable makes this process non-dumpable (PR_SET_DUMPABLE 0), as
// ssh-agent and gpg-agent make themselves. The process holds the providers'
// keys, in its environment and in its memory; /proc/<pid>/environ shows the
// environment it was started with for as long as it lives (os.Unsetenv
// changes only Go's copy). An agent that runs without the sandbox — a coding
// CLI where bubblewrap cannot run (cliagent's Plain), any agent under the
// operator's `sandbox: none` — runs as this process's user, and could read
// every key from /proc/<pid>/environ, /proc/<pid>/mem or by ptrace, after a
// prompt injection in the repository it works on. Non-dumpable, the kernel
// gives this process's /proc files to root (environ, mem, maps, fd, cwd are
// refused to its own user) and refuses ptrace without CAP_SYS_PTRACE; stat,
// status and cmdline stay world-readable (a lease's start time, the tests'
// resident sets), and the process still reads its own fd, exe, stat and
// maps (the metrics' process collector, os.Executable). execve makes a child
// dumpable again, so agents, CLIs and their tools run as before. The price:
// no core dump, and a debugger or strace attaches only as root (one that
// starts the process, dlv exec or strace CMD, still traces it). Root is not
// kept out.
func nondumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
