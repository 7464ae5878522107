package coordination

// ProgressKind says what a Progress message reports.
type ProgressKind string

// Progress kinds, in the order a run meets them.
const (
	ProgressStepStarted ProgressKind = "step_started" // an agent's step was launched
	ProgressAnswer      ProgressKind = "answer"       // a step landed an answer
	ProgressVote        ProgressKind = "vote"         // a step landed a vote
	ProgressError       ProgressKind = "error"        // a step failed
	ProgressDecided     ProgressKind = "decided"      // a winner, the final answer still to write
	ProgressFinished    ProgressKind = "finished"     // the session ended
	ProgressCancelled   ProgressKind = "cancelled"    // the run was cancelled
	ProgressStoreOutage ProgressKind = "store_outage" // the store is unreachable, the run paused (or it is back)
)
