// Package benchmark holds the measurements behind `massgen-bench`: what
// the protocol costs in time (per-step overhead on each store, a run against
// the parallel ideal, the same team consulted one model at a time, many
// sessions in one process, the file store's sustained steps per second), and
// what it buys in quality (protocols compared on the same items and seeds,
// with sim agents whose first answers come from providers/sim/itemmodel).
//
// Every number comes from the real coordination package — sim providers
// behind the real engine and a real store — never from a re-implementation
// of the protocol. It knows nothing of MCP.
package benchmark
