// Package pgstore is a coordination.Store in PostgreSQL, for several
// massgen-mcp replicas sharing one truth: sessions, the ledger (its unique
// (session, agent, step) key refuses a second landing of a step), session
// entries, the timeline, host views, tool records, usage, the run and step
// leases as rows with an expiry and a fencing version, content-addressed
// blobs, and the permission audit and approval handshake (permissions.go). Every row carries its tenant and every query names it.
//
// It owns the schema (embedded migrations, applied at Open under an
// advisory lock), its locks (rows renewed by a heartbeat, so a dead
// replica's locks expire) and the watch (LISTEN/NOTIFY). Like the file
// store it knows nothing of the protocol's derived state: it stores and
// returns the ledger, and coordination derives.
package pgstore
