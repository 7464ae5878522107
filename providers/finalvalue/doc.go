// Package finalvalue reduces an answer to the short value two answers are
// compared by (docs/DESIGN.md, "Final values"): a protocol rule that the
// coordination core (pooling votes by value, short-answer checks) and the
// simulated agents of providers/sim must apply alike, so it lives in one leaf
// both import. It imports nothing of the project.
package finalvalue
