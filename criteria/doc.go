// Package criteria owns evaluation criteria (docs/DESIGN.md, "Evaluation
// criteria"): the Item every session stores and the Set a caller receives,
// reading every shape callers and MassGen use (Parse), validation and
// numbering (Provided, Validate), MassGen's --eval-criteria rendering
// (MassGen), the built-in defaults per kind of task (Defaults), and
// generation by one model call (Generate).
//
// criteria knows nothing of sessions: coordination attaches criteria to a
// session and puts them into every prompt, never the other way round. It
// speaks to a model only through providers.Provider and knows nothing of any
// provider's wire format.
package criteria
