package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// rehearsalKey is every key of a rehearsal: plainly no key, so that nothing
// real could be billed with it.
const rehearsalKey = "sk-dummy-rehearsal-not-a-key"

// rehearsal is the fake provider APIs served on loopback with a temporary
// HOME whose CLI settings point at them: what `fake-providers` serves and
// `run --rehearse` / `serve --rehearse` run a team against.
type rehearsal struct {
	URL    string // the fakes' root, http://127.0.0.1:PORT
	Home   string // a temporary HOME: .codex/config.toml and .gemini/settings.json
	Script *fake.Script
	srv    *http.Server
	done   chan error
}

// startRehearsal serves script's fakes on listen (a loopback address),
// through wrap when it is not nil, and writes the CLIs' settings into a new
// temporary HOME. Close stops both.
func startRehearsal(listen string, script *fake.Script, wrap func(http.Handler) http.Handler) (*rehearsal, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return nil, fmt.Errorf("%w: --listen %q must be a loopback address such as 127.0.0.1:0", coordination.ErrBadInput, listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("cannot serve the fake providers on %s: %w", listen, err)
	}
	home, err := os.MkdirTemp("", "massgen-rehearsal-home-")
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("cannot make the rehearsal's temporary HOME: %w", err)
	}
	r := &rehearsal{URL: "http://" + ln.Addr().String(), Home: home, Script: script, done: make(chan error, 1)}
	if err := writeRehearsalHome(home, r.URL); err != nil {
		ln.Close()
		os.RemoveAll(home)
		return nil, err
	}
	h := fake.NewAll(script)
	if wrap != nil {
		h = wrap(h)
	}
	r.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// Close stops the fakes and removes the temporary HOME (and the per-agent
// homes a run made under it).
func (r *rehearsal) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if serveErr := <-r.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return errors.Join(err, os.RemoveAll(r.Home))
}

// writeRehearsalHome writes the settings each coding CLI needs to reach the
// fakes at root: Codex ignores OPENAI_BASE_URL, so the fake is its custom
// model provider; Gemini CLI must be told to use API-key auth (with a base
// URL alone it picks its gateway auth, which -p refuses: "Invalid auth
// method selected"). Claude Code needs only ANTHROPIC_BASE_URL.
func writeRehearsalHome(home, root string) error {
	for path, body := range map[string]string{
		".codex/config.toml": "model_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"" + root + "/v1\"\n" +
			"env_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\nsupports_websockets = false\nrequest_max_retries = 0\nstream_max_retries = 0\n",
		".gemini/settings.json": `{"security": {"auth": {"selectedType": "gemini-api-key"}}}` + "\n",
	} {
		p := filepath.Join(home, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("cannot write the rehearsal's CLI settings: %w", err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			return fmt.Errorf("cannot write the rehearsal's CLI settings: %w", err)
		}
	}
	return nil
}

// rehearsalEnv is every variable that points an agent at the fakes at root
// with home's CLI settings: each API backend's base URL and a dummy key for
// each of its key variables, Codex's home, and Claude Code's retries bounded
// (a fake that fails should fail fast). HOME itself is not in it.
func rehearsalEnv(root, home string) map[string]string {
	env := fake.BaseURLs(root)
	for _, b := range providers.Backends() {
		for _, k := range b.KeyEnv {
			env[k] = rehearsalKey
		}
	}
	env["CODEX_HOME"] = filepath.Join(home, ".codex")
	env["CLAUDE_CODE_MAX_RETRIES"] = "1"
	return env
}

// Env is the rehearsal's variables, HOME included.
func (r *rehearsal) Env() map[string]string {
	env := rehearsalEnv(r.URL, r.Home)
	env["HOME"] = r.Home
	return env
}

// keptInRehearsal says which of the user's variables a rehearsal keeps:
// where programs are and how to print, never a credential. Everything else
// (every key, token, cloud setting, base URL, CLI home) is dropped, so that
// no agent, CLI or API, could reach a real provider with a real key.
func keptInRehearsal(name string) bool {
	switch name {
	case "PATH", "LANG", "TERM", "COLORTERM", "NO_COLOR", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL",
		"CODEX_BIN", "CLAUDE_BIN", "GEMINI_BIN", "MASSGEN_STATE_DIR", "MASSGEN_TEST_BIN", "MASSGEN_MCP_TOKEN",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "ALL_PROXY", "all_proxy":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// enterRehearsal makes this process's environment the rehearsal's: the
// user's variables but those keptInRehearsal are removed, the rehearsal's
// set, and .env files are no longer read (a key in ./.env or ~/.env stays
// there). Agents and CLIs started from now on see only this.
func enterRehearsal(r *rehearsal) error {
	kept := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && keptInRehearsal(k) {
			kept[k] = v
		}
	}
	for k, v := range r.Env() {
		kept[k] = v
	}
	// One of Gemini's two key variables: with both set, genai logs a
	// warning to stderr on every client it makes, between the steps and
	// over the live view. GEMINI_API_KEY stays, as Gemini CLI reads it too;
	// with .env files no longer read, the other cannot come back from one.
	// (--print-env exports both: a run in the user's shell still reads
	// ./.env and ~/.env, where a real GOOGLE_API_KEY would then win.)
	delete(kept, "GOOGLE_API_KEY")
	os.Clearenv()
	for k, v := range kept {
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("cannot set %s for the rehearsal: %w", k, err)
		}
	}
	keys.SetEnvironmentOnly(true)
	return nil
}

// printRehearsalEnv writes the rehearsal's variables as shell exports (HOME
// aside: a shell keeps its own, so Gemini CLI's auth choice is named for
// it instead).
func printRehearsalEnv(out interface{ Write([]byte) (int, error) }, r *rehearsal) {
	env := rehearsalEnv(r.URL, r.Home)
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(out, "# fake provider APIs at %s, with dummy keys: eval this in your shell, then run massgen-mcp as usual.\n", r.URL)
	fmt.Fprintf(out, "# gemini_cli reads its auth choice from $HOME/.gemini/settings.json; for it, run with HOME=%s\n", r.Home)
	fmt.Fprintf(out, "# (or use `massgen-mcp run --rehearse`, which does all of this and keeps your own keys and homes out).\n")
	for _, k := range names {
		fmt.Fprintf(out, "export %s=%s\n", k, shellQuote(env[k]))
	}
}

// shellQuote quotes a value for a POSIX shell when it needs it.
func shellQuote(v string) string {
	if v != "" && strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@") == "" {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// rehearsalScript is what the fakes play in a rehearsal: each coding CLI
// writes fake.RehearsalFile with its own edit tool and answers, API agents
// answer, everyone votes for the first answer offered.
func rehearsalScript() *fake.Script {
	s := fake.NewScript()
	s.Default = fake.Rehearsal
	return s
}

// beginRehearsal serves the fakes in this process and makes its environment
// the rehearsal's (enterRehearsal), saying so on log; end stops the fakes
// and removes the temporary HOME.
func beginRehearsal(log io.Writer) (end func(), err error) {
	r, err := startRehearsal("127.0.0.1:0", rehearsalScript(), func(h http.Handler) http.Handler { return dummyKeysOnly(h, log) })
	if err != nil {
		return nil, err
	}
	if err := enterRehearsal(r); err != nil {
		r.Close()
		return nil, err
	}
	fmt.Fprintf(log, "Rehearsal: every agent talks to fake providers at %s with dummy keys and a temporary HOME (%s, removed after); nothing real is called or billed.\n", r.URL, r.Home)
	return func() { r.Close() }, nil
}

// dummyKeysOnly refuses (401) every request to the fakes that carries a key
// other than rehearsalKey and says so on log: in a rehearsal a real key
// reaching even the fakes means one would reach a real API elsewhere.
func dummyKeysOnly(h http.Handler, log io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, k := range []string{
			strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.Header.Get("X-Api-Key"), r.Header.Get("X-Goog-Api-Key"),
		} {
			if k != "" && k != rehearsalKey {
				fmt.Fprintf(log, "Rehearsal: a request to %s carried a key that is not the rehearsal's dummy; refused.\n", r.URL.Path)
				http.Error(w, "a key other than the rehearsal's dummy key reached the fake providers", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
