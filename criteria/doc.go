// Package criteria holds evaluation criteria: the item type every session
// stores, and (with its own issue) generation, built-in defaults, and
// conversions between the shapes callers and MassGen use.
//
// criteria knows nothing of sessions or providers' wire formats.
package criteria
