// Package gcpolicy is the process-wide garbage-collector policy of the
// binaries that serve runs: the GOGC setting they run with (Tune) and the
// idle collector that collects while every model is thinking (Busy, the
// hook a coordination.Service calls as each step's model call goes out and
// comes back). It is a policy of the process, not of the protocol, so it
// lives beside the command; the benchmarks import it to measure what the
// binary runs. It knows nothing of sessions.
package gcpolicy
