// Package workspace owns the files a team delivers: each agent's live
// workspace (agents/<id>/workspace/), the snapshot every answer takes of it
// (agents/<id>/NNN/workspace/ with its manifest files.json, MassGen's layout),
// rollback of the live workspace to the latest snapshot, the listings peers
// read, project context directories with their permissions, the starting
// content a write context gives every workspace (a git worktree or a copy
// honouring .gitignore), and applying the winner's changes back to that
// context as a diff with conflict detection.
//
// Snapshot contents go through the Blobs interface: new content is copied
// (reflinked where the file system can), unchanged files are shared with the
// previous snapshot by hard link, never with a live file an agent may rewrite
// in place. Symlinks are recorded as links and never followed. Every path an
// agent names is confined with os.Root.
//
// workspace knows no protocol: it never reads a ledger, a label or a vote.
// coordination decides when to snapshot, roll back or apply, and which
// snapshot each peer shows.
package workspace
