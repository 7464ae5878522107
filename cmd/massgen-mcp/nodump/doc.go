// Package nodump makes massgen-mcp non-dumpable as its packages initialize,
// before the Go runtime has run any of the command's own code: the
// providers' keys are in its environment from execve on, and
// /proc/<pid>/environ shows them to any process of its user until then.
//
// The process is made non-dumpable (PR_SET_DUMPABLE 0), as
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
//
// It knows nothing of the commands; main makes a command that must stay
// inspectable (workflow-server) dumpable again.
package nodump
