// Package storetest is the one test suite every coordination.Store passes:
// the file store and the memory store call Run from their tests, and a future
// store (PostgreSQL) will too. It pins the Store contract: ids, errors, step
// numbering, locks, round trips, copying and concurrency. Its cases come in
// one list per interface of the Store (SessionCases, LedgerCases, LockCases,
// EventCases, ProjectionCases for a store that keeps them, and ContractCases
// for every method), so a new store can be brought up, and its failures
// read, one part at a time.
//
// storetest knows only the coordination.Store interface, never an
// implementation or an on-disk layout.
package storetest
