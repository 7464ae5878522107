package keys

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ErrMissingKey is wrapped by every error about a credential or endpoint that
// is not set anywhere Load looks. It is providers.ErrMissingKey, so the core
// tells a keyless backend without importing keys.
var ErrMissingKey = providers.ErrMissingKey

// MissingKeyError names the backend and the variables that would fix it.
type MissingKeyError struct {
	Backend string
	Vars    []string // any one of them suffices
	What    string   // "an API key", "an endpoint"
}

func (e *MissingKeyError) Error() string {
	vars := strings.Join(e.Vars, " or ")
	example := e.Vars[0] + "=…"
	return fmt.Sprintf("%s needs %s: set %s in the environment, or write %s in ./.env or ~/.env (for a server an MCP client starts, in the env entry of that server in the client's config); for a dry run without keys, use sim agents (e.g. sim/strong,sim/strong,sim)",
		e.Backend, e.What, vars, example)
}

func (e *MissingKeyError) Unwrap() error { return ErrMissingKey }

// Resolved is what a backend needs to be reached, with where each part came
// from (for messages: "the key in OPENAI_API_KEY from ./.env").
type Resolved struct {
	Backend    string
	APIKey     string // never print it
	KeyVar     string // the variable that held the key; "" if none is needed
	KeyOrigin  string // FromEnvironment, FromWorkDir or FromHome
	BaseURL    string // "" means the SDK's own default
	BaseURLVia string // "the spec", a variable and its origin, "the default", or ""
	APIVersion string // azure_openai only
}

// KeyHint says which key a user should check, without showing it:
// "OPENAI_API_KEY (from ./.env)". It is "" for backends without keys.
func (r Resolved) KeyHint() string {
	if r.KeyVar == "" {
		return ""
	}
	return fmt.Sprintf("%s (from %s)", r.KeyVar, r.KeyOrigin)
}

// Resolve finds a backend's key, base URL and (for Azure) API version. The
// base URL is the spec's @url if given, else the backend's BASE_URL variable,
// else its default. A missing key is a *MissingKeyError.
func (e *Env) Resolve(info providers.BackendInfo, specBaseURL string) (Resolved, error) {
	r := Resolved{Backend: info.Name}
	if len(info.KeyEnv) > 0 {
		for _, name := range info.KeyEnv {
			if v, origin, ok := e.Lookup(name); ok {
				r.APIKey, r.KeyVar, r.KeyOrigin = strings.TrimSpace(v), name, origin
				break
			}
		}
		if r.APIKey == "" {
			return Resolved{}, &MissingKeyError{Backend: info.Name, Vars: info.KeyEnv, What: "an API key"}
		}
	}
	switch {
	case specBaseURL != "":
		r.BaseURL, r.BaseURLVia = specBaseURL, "the spec"
	case info.BaseURLEnv != "":
		if v, origin, ok := e.Lookup(info.BaseURLEnv); ok {
			v = strings.TrimSpace(v)
			if err := checkURL(v); err != nil {
				return Resolved{}, fmt.Errorf("%s (from %s) %w; set it to the API's base URL, e.g. %s, or unset it", info.BaseURLEnv, origin, err, exampleURL(info))
			}
			r.BaseURL, r.BaseURLVia = v, fmt.Sprintf("%s (from %s)", info.BaseURLEnv, origin)
		}
	}
	if r.BaseURL == "" && info.DefaultBaseURL != "" {
		r.BaseURL, r.BaseURLVia = info.DefaultBaseURL, "the default"
	}
	// Azure has no public default endpoint: every resource has its own.
	if info.Name == "azure_openai" && r.BaseURL == "" {
		return Resolved{}, &MissingKeyError{Backend: info.Name, Vars: []string{info.BaseURLEnv}, What: "its resource endpoint (https://<resource>.openai.azure.com)"}
	}
	for _, name := range info.ExtraEnv {
		if name == "OPENAI_API_VERSION" {
			if v, _, ok := e.Lookup(name); ok {
				r.APIVersion = strings.TrimSpace(v)
			}
		}
	}
	// Azure's data-plane API is versioned per request and has no default the
	// SDK could pick for the user's resource.
	if info.Name == "azure_openai" && r.APIVersion == "" {
		return Resolved{}, &MissingKeyError{Backend: info.Name, Vars: []string{"OPENAI_API_VERSION"}, What: "an API version (e.g. 2024-10-21)"}
	}
	return r, nil
}

// checkURL refuses anything but an absolute http(s) URL. The message never
// repeats the value: a key pasted into the wrong variable would leak.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("is not an http(s) URL")
	}
	return nil
}

func exampleURL(info providers.BackendInfo) string {
	if info.DefaultBaseURL != "" {
		return info.DefaultBaseURL
	}
	if info.Name == "azure_openai" {
		return "https://<resource>.openai.azure.com"
	}
	return "https://api.example.com/v1"
}
