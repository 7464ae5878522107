package geminicli

import (
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// CheckAuth implements cliagent.AuthChecker: a Gemini API key, Vertex AI
// (GOOGLE_GENAI_USE_VERTEXAI with a project and location, or a Google API
// key), or a Google login (oauth_creds.json in ~/.gemini).
func (CLI) CheckAuth(a cliagent.AuthContext) (bool, string) {
	if _, origin, ok := a.Lookup("GEMINI_API_KEY"); ok {
		return true, "authenticates with GEMINI_API_KEY (found in " + origin + ")"
	}
	if v, _, ok := a.Lookup("GOOGLE_GENAI_USE_VERTEXAI"); ok && v == "true" {
		_, _, project := a.Lookup("GOOGLE_CLOUD_PROJECT")
		_, _, location := a.Lookup("GOOGLE_CLOUD_LOCATION")
		_, _, key := a.Lookup("GOOGLE_API_KEY")
		if (project && location) || key {
			return true, "authenticates with Vertex AI"
		}
		return false, "GOOGLE_GENAI_USE_VERTEXAI is set, but Vertex AI needs GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, or GOOGLE_API_KEY"
	}
	if a.ConfigDir != "" {
		if _, err := os.Stat(filepath.Join(a.ConfigDir, "oauth_creds.json")); err == nil {
			return true, "authenticates with your Google login (" + a.ConfigDir + "; costs are estimates at API list prices)"
		}
	}
	return false, "GEMINI_API_KEY is not set and there is no Gemini CLI login: set GEMINI_API_KEY, or run gemini once and sign in with Google"
}

// OnSubscription implements cliagent.SubscriptionTeller: with no Gemini API
// key and no Vertex AI, the CLI runs on the Google login (its free tier or a
// Code Assist plan), so costs priced at API list prices are estimates.
func (CLI) OnSubscription(a cliagent.AuthContext) bool {
	if _, _, ok := a.Lookup("GEMINI_API_KEY"); ok {
		return false
	}
	if v, _, ok := a.Lookup("GOOGLE_GENAI_USE_VERTEXAI"); ok && v == "true" {
		return false
	}
	if a.ConfigDir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(a.ConfigDir, "oauth_creds.json"))
	return err == nil
}
