package cliagent

import "syscall"

// dieWithParent has the kernel kill a CLI run when the process that
// started it dies (a SIGKILLed server): left alone, an unsandboxed CLI goes
// on calling its model at the user's expense, and writing a workspace
// another replica may by then hold, until its step ends. The signal reaches
// that one process: a sandboxed run's bwrap, whose --die-with-parent and PID
// namespace take the rest, or an unsandboxed run's supervisor, which is
// given SIGTERM instead and takes the CLI's tree (package supervisor). It
// comes when the starting thread exits; the runtime keeps its threads for
// the process's life, and no goroutine that starts a CLI locks one.
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
