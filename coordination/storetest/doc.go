// Package storetest is the one test suite every coordination.Store passes:
// the file store and the memory store call Run from their tests, and a future
// store (PostgreSQL) will too. It pins the Store contract: ids, errors, step
// numbering, locks, round trips, copying and concurrency.
//
// storetest knows only the coordination.Store interface, never an
// implementation or an on-disk layout.
package storetest
