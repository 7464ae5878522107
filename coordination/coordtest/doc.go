// Package coordtest is the one harness for tests that drive a
// coordination.Service, shared by coordination's own tests and the packages
// built on it (checkpoint) instead of copied into each: a Service over a
// memory store whose agents use the providers a test gives (Harness), a
// provider that plays a script of replies (Scripted), a team of them (Team),
// and the replies and checks those tests write (Answer, Vote, HasTool, JSON).
// It plays the part raft's testing.go does for raft. Rules that must hold
// over every store, whoever shares it, are played here once for any store a
// test gives (CancelKept, DeadHolderReadsInterrupted).
//
// coordtest is for tests only: nothing the server links imports it. It knows
// coordination's exported API and the memory store, never an MCP surface or a
// real backend.
package coordtest
