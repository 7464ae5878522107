package providers

// BackendStatus says whether one backend can be used here, and why not
// (providers/backends fills it in).
type BackendStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Usable    bool   `json:"usable"`
	// Why is a sentence either way: "OPENAI_API_KEY found in ./.env",
	// "OPENAI_API_KEY not set", "no server at http://localhost:11434/v1",
	// "codex is not on PATH; install it or set CODEX_BIN to its path".
	Why    string   `json:"why"`
	KeyEnv []string `json:"key_env"` // any one of them suffices; empty if none is needed
	// BaseURL is where calls would go ("" for the SDK's default), with any
	// password in it redacted.
	BaseURL     string `json:"base_url,omitempty"`
	Implemented bool   `json:"implemented"`
	// Version is a CLI agent's version, as its --version prints it.
	Version string `json:"version,omitempty"`
}

// BackendReport is what a build can call from here, read from one snapshot
// of the keys so that the rows and the default team cannot disagree: every
// backend's status, the default team and why (or why there is none), and
// the problems found reading .env files, and whether agents' commands can
// run sandboxed.
type BackendReport struct {
	Backends       []BackendStatus
	DefaultTeam    []string
	DefaultTeamWhy string
	DefaultTeamErr error
	Problems       []string
	Sandbox        SandboxStatus
}

// SandboxStatus says whether the commands agents run (run_command, stdio
// MCP servers) can be sandboxed here (providers/tools/sandbox.Probe).
type SandboxStatus struct {
	Available bool   `json:"available"`
	Why       string `json:"why"` // a sentence either way; when unavailable, the fix
}
