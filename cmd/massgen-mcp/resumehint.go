package main

// resumeCommand is the command that resumes a file-store session, with the
// --state-dir the user named (none for the default): pasted, a hint without
// it looks in ./.massgen and finds no such session.
func resumeCommand(dir, id string) string {
	return "massgen-mcp run" + stateDirFlag(dir) + " --resume " + id
}
