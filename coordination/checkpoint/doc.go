// Package checkpoint is the checkpoint review: a team that reviews a risky
// step and returns a verdict (proceed, revise, refuse) with the plan to
// follow. It builds the review session (Run: the task text, the safety
// policy, the review's setup), gives the core's review hook its meaning
// (reviews.go: the rules and first prompt reviewers read, the structured
// new_answer, the check of a review against the plan schema), validates plans
// (plan.go) and assembles the result from the team's. The protocol itself —
// labels, votes, consensus, the run loop — is coordination's, unchanged.
//
// A program that offers reviews passes the hook (Reviews) to every Service
// it opens (coordination.Options.Reviews); nothing is installed by linking
// the package. It knows nothing of MCP.
package checkpoint
