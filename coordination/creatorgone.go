package coordination

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A session created for a run that no run has claimed reads interrupted
// once NeverStartedGrace has passed (neverstarted.go): its creator may be
// on another host, whose death nothing here can see. On the creator's own
// host its death is seen at once, as a run holder's is (RunLease.Gone): a
// server SIGKILLed while it created a session, or between Create and
// Start, leaves a session that reads interrupted there at once, not
// running for a minute (ten, its creation cut short) with nothing to run
// it.

// A run retried in another process (a client asking run_team{session_id}
// again of another server, the one it asked first killed between Create
// and Start, or part-way through Create) joins the stored session
// (Service.join) and starts its run a moment later. Its Creator still
// named the dead process, so between the two the session read interrupted,
// was listed so, and a server resuming interrupted runs took it up, while
// the process asked for it was about to run it. So the process that joins
// a session created for a run, untouched since and never claimed by a
// run, whose creator it sees gone, takes its creation over: it stamps its
// end again with itself as the creator (SetReady), and treats it as one
// it created for this run
// (Service.fresh: refused its run, it reads cancelled, saying why, as a
// session of its own would). A creator not known gone (another host's,
// or alive) is left as it is: two processes may both be about to start
// the run, and the grace covers either. Once a run claims the session,
// its run lease names the holder and the creator is never read again.

// takesOverCreation tells whether this process, asked again for the team
// of s, a stored session it joins, takes its creation over: s was created
// for a run, no run has ever claimed it (no run lease: a run that claimed
// it and died before a step landed leaves an empty ledger too, and its
// retry is a resume of a dead run, which refused stays interrupted),
// nothing has touched it (unstarted), and its creator is gone. A lease
// that cannot be read says no.
func (svc *Service) takesOverCreation(ctx context.Context, s *Session) bool {
	if !s.Creator.gone() {
		return false
	}
	if ls, ok := svc.store.(LeaseStore); ok {
		if l, err := ls.ReadRun(ctx, s.ID); err != nil || l != nil {
			return false
		}
	}
	return svc.unstarted(ctx, s)
}

// tookOverCreation records that this service took over s's creation
// (takesOverCreation): its run is this service's to start, as for a
// session it created, and the timeline says why another server runs it.
func (svc *Service) tookOverCreation(ctx context.Context, s *Session) {
	svc.fresh.Put(s.ID, struct{}{})
	svc.event(ctx, s.ID, Event{Type: "resumed", Message: "session asked for again: the server that created it at " +
		s.CreatedAt.UTC().Format(time.RFC3339) + " stopped before its run began"})
	svc.log.Info().Str("session", s.ID).Time("created", s.CreatedAt).Msg("session asked for again: the server that created it stopped before its run began; its creation is this server's now")
}

// creationMayGoOn tells whether session id's creation was cut short (no
// ReadyAt) within UnfinishedCreationGrace: it reads interrupted once its
// creator is seen dead, but a server resuming interrupted runs leaves it
// for that grace, as before, since Create asked again for the same team
// (a client retrying run_team{session_id}) finishes storing its starting
// files, and a run taken up meanwhile would start without them.
func (svc *Service) creationMayGoOn(ctx context.Context, id string) bool {
	s, err := svc.sessions.get(ctx, id)
	return err == nil && s.ReadyAt.IsZero() && svc.now().Sub(s.CreatedAt) <= UnfinishedCreationGrace
}

// Creator is the process that created a session: its host, pid and start
// time, as a lease names its holder, its PID namespace, so that a reader
// in another namespace of the same host (a container sharing the state
// directory), where the pid means another process or none, never takes it
// for dead, and its kernel's boot id, since neither a host name nor a
// namespace's name tells machines apart: clones, containers given one
// hostname, "localhost", and every host's initial PID namespace is
// pid:[4026531836]. A pid means one process only under one kernel.
type Creator struct {
	Host      string `json:"host"`
	PID       int    `json:"pid"`
	ProcStart uint64 `json:"proc_start,omitempty"`
	PIDNS     string `json:"pid_ns,omitempty"`
	BootID    string `json:"boot_id,omitempty"`
}

// thisCreator is this process as a session's creator.
func thisCreator() *Creator {
	o := ThisProcess("")
	return &Creator{Host: o.Host, PID: o.PID, ProcStart: o.ProcStart, PIDNS: thisPIDNS(), BootID: thisBootID()}
}

// gone tells whether c is known dead: it ran under this kernel, in this
// PID namespace, with a known start time, and its process has ended.
// Unknown (nil, another kernel or namespace, no start time or boot id,
// not Linux) says no, and the grace decides.
func (c *Creator) gone() bool {
	if c == nil || c.PID <= 0 || c.ProcStart == 0 || c.PIDNS == "" || c.BootID == "" ||
		c.Host != ThisHost() || c.PIDNS != thisPIDNS() || c.BootID != thisBootID() {
		return false
	}
	return ProcessGone(c.PID, c.ProcStart)
}

var (
	pidNS     string
	pidNSOnce sync.Once

	bootID     string
	bootIDOnce sync.Once
)

// thisBootID is this kernel's boot id, one per machine and boot, and
// shared by its containers: with a PID namespace's name, unique under one
// kernel, it names the namespace a pid is looked up in. "" where there is
// none to read (not Linux).
func thisBootID() string {
	bootIDOnce.Do(func() {
		b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
		bootID = strings.TrimSpace(string(b))
	})
	return bootID
}

// thisPIDNS names this process's PID namespace ("pid:[4026531836]"), ""
// where there is none to read (not Linux) or where /proc is another
// namespace's (/proc/self is not this pid: unshare --pid without a /proc of
// its own), whose /proc/<pid> would be some other process, or none.
func thisPIDNS() string {
	pidNSOnce.Do(func() {
		if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
			return
		}
		pidNS, _ = os.Readlink("/proc/self/ns/pid")
	})
	return pidNS
}
