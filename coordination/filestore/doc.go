// Package filestore is the default coordination.Store: sessions on disk in
// MassGen's step-mode layout (agents/<id>/NNN/answer.json, vote.json, …), so a
// session written here can be stepped by `massgen --step` and a session written
// by MassGen can be read here. It owns the layout, atomic writes and the
// cross-process locks (Linux open-file-description locks).
//
// filestore knows nothing of the protocol's derived state (staleness, consensus,
// next agents): it stores and returns the ledger, and coordination derives.
// What readers outside the process read beside the ledger are its
// projections (coordination.ProjectionStore): status.json, rendered with
// MassGen's field names from the state coordination derived (status.go), and
// final/, written from each finished entry as it lands and rebuilt by Tidy
// (final.go).
package filestore
