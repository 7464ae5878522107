// Package storebench is the one benchmark every coordination.Store runs, as
// storetest is the one test suite (hashicorp/raft's bench/ beside its
// tests): the same operations, on the same data, so the file store, the
// memory store and a future database store are measured on the same
// numbers. Run is called from a store's Benchmark function; Check runs every
// operation a few times from a test, so a benchmark that no longer runs
// fails the ordinary test run.
//
// It knows only the coordination.Store interface.
package storebench
