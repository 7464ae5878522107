// Package memstore is a coordination.Store held in memory, for tests,
// benchmarks and ephemeral servers. It has the file store's semantics (ids,
// step numbering, locks, errors) without a disk; its sessions die with the
// process, and so do its locks.
//
// memstore knows nothing of the protocol's derived state nor of any on-disk
// layout: it stores and returns the ledger, copying data in and out.
package memstore
