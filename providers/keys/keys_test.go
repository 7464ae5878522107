package keys

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// plantedKey is a key that must never appear in any message.
const plantedKey = "sk-dummy-PLANTED-not-a-key-0000"

func writeEnv(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mapEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestEnvironmentBeatsWorkDirBeatsHome(t *testing.T) {
	work, home := t.TempDir(), t.TempDir()
	writeEnv(t, work, "A=work\nB=work\n")
	writeEnv(t, home, "A=home\nB=home\nC=home\n")
	e := LoadFrom(Sources{Lookup: mapEnv(map[string]string{"A": "env", "B": ""}), WorkDir: work, Home: home})
	for _, tc := range []struct{ name, want, origin string }{
		{"A", "env", FromEnvironment},
		{"B", "work", FromWorkDir}, // empty in the environment counts as unset
		{"C", "home", FromHome},
	} {
		v, origin, ok := e.Lookup(tc.name)
		if !ok || v != tc.want || origin != tc.origin {
			t.Errorf("%s = %q from %q (%v); want %q from %q", tc.name, v, origin, ok, tc.want, tc.origin)
		}
	}
	if _, _, ok := e.Lookup("D"); ok {
		t.Error("D is set nowhere")
	}
}

func TestLoadNeverChangesTheProcessEnvironment(t *testing.T) {
	work := t.TempDir()
	writeEnv(t, work, "MASSGEN_KEYS_TEST_ONLY_IN_FILE=x\n")
	e := LoadFrom(Sources{WorkDir: work, Home: t.TempDir()})
	if v, _, _ := e.Lookup("MASSGEN_KEYS_TEST_ONLY_IN_FILE"); v != "x" {
		t.Fatalf("the .env value was not read: %q", v)
	}
	if _, ok := os.LookupEnv("MASSGEN_KEYS_TEST_ONLY_IN_FILE"); ok {
		t.Fatal("Load exported a .env variable into the process")
	}
}

func TestHomeAsWorkDirIsReadOnce(t *testing.T) {
	dir := t.TempDir()
	writeEnv(t, dir, "A=1\n")
	e := LoadFrom(Sources{Lookup: mapEnv(nil), WorkDir: dir, Home: dir})
	if len(e.layers) != 2 {
		t.Fatalf("want environment + one file, got %d layers", len(e.layers))
	}
}

func TestBrokenDotEnvIsSkippedWithoutQuotingIt(t *testing.T) {
	work, home := t.TempDir(), t.TempDir()
	writeEnv(t, work, "OPENAI_API_KEY "+plantedKey+"\n!!bad line\n")
	writeEnv(t, home, "OPENAI_API_KEY=dummy-from-home-not-a-key\n")
	e := LoadFrom(Sources{Lookup: mapEnv(nil), WorkDir: work, Home: home})
	if v, origin, _ := e.Lookup("OPENAI_API_KEY"); v != "dummy-from-home-not-a-key" || origin != FromHome {
		t.Errorf("a broken ./.env must not hide ~/.env: got %q from %q", v, origin)
	}
	probs := e.Problems()
	if len(probs) != 1 || !strings.Contains(probs[0], filepath.Join(work, ".env")) {
		t.Fatalf("problems: %q", probs)
	}
	if strings.Contains(probs[0], "PLANTED") {
		t.Fatalf("the problem quotes the file: %q", probs[0])
	}
}

func backend(t *testing.T, name string) providers.BackendInfo {
	t.Helper()
	info, ok := providers.LookupBackend(name)
	if !ok {
		t.Fatalf("no backend %s", name)
	}
	return info
}

func TestResolveFindsTheKeyAndSaysWhere(t *testing.T) {
	e := FromMap(map[string]string{"GEMINI_API_KEY": plantedKey})
	r, err := e.Resolve(backend(t, "gemini"), "")
	if err != nil {
		t.Fatal(err)
	}
	if r.APIKey != plantedKey || r.KeyVar != "GEMINI_API_KEY" || r.KeyHint() != "GEMINI_API_KEY (from the environment)" {
		t.Errorf("resolved %+v, hint %q", r, r.KeyHint())
	}
	if r.BaseURL != "" {
		t.Errorf("gemini has no default base URL in the table; got %q", r.BaseURL)
	}
}

func TestMissingKeyNamesTheVariablesDotEnvAndSim(t *testing.T) {
	_, err := FromMap(nil).Resolve(backend(t, "gemini"), "")
	if !errors.Is(err, ErrMissingKey) {
		t.Fatalf("want ErrMissingKey, got %v", err)
	}
	for _, want := range []string{"gemini", "GOOGLE_API_KEY or GEMINI_API_KEY", ".env", "sim"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}
}

func TestBaseURLSpecThenVariableThenDefault(t *testing.T) {
	info := backend(t, "ollama")
	e := FromMap(map[string]string{"OLLAMA_BASE_URL": "http://gpu-box:11434/v1"})
	for _, tc := range []struct {
		env  *Env
		spec string
		want string
		via  string
	}{
		{e, "http://spec:1/v1", "http://spec:1/v1", "the spec"},
		{e, "", "http://gpu-box:11434/v1", "OLLAMA_BASE_URL (from the environment)"},
		{FromMap(nil), "", "http://localhost:11434/v1", "the default"},
	} {
		r, err := tc.env.Resolve(info, tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if r.BaseURL != tc.want || r.BaseURLVia != tc.via || r.APIKey != "" {
			t.Errorf("got %q via %q, want %q via %q", r.BaseURL, r.BaseURLVia, tc.want, tc.via)
		}
	}
}

func TestBadBaseURLVariableIsRefusedWithoutEchoingIt(t *testing.T) {
	e := FromMap(map[string]string{"OPENAI_API_KEY": "dummy-k-not-a-key", "OPENAI_BASE_URL": plantedKey})
	_, err := e.Resolve(backend(t, "openai"), "")
	if err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") || strings.Contains(err.Error(), plantedKey) {
		t.Fatalf("got %v", err)
	}
}

func TestAzureNeedsItsEndpointAndReadsTheAPIVersion(t *testing.T) {
	info := backend(t, "azure_openai")
	_, err := FromMap(map[string]string{"AZURE_OPENAI_API_KEY": plantedKey}).Resolve(info, "")
	if !errors.Is(err, ErrMissingKey) || !strings.Contains(err.Error(), "AZURE_OPENAI_ENDPOINT") {
		t.Fatalf("got %v", err)
	}
	_, err = FromMap(map[string]string{"AZURE_OPENAI_API_KEY": plantedKey, "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com"}).Resolve(info, "")
	if !errors.Is(err, ErrMissingKey) || !strings.Contains(err.Error(), "OPENAI_API_VERSION") {
		t.Fatalf("got %v", err)
	}
	r, err := FromMap(map[string]string{
		"AZURE_OPENAI_API_KEY":  plantedKey,
		"AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com",
		"OPENAI_API_VERSION":    "2025-04-01-preview",
	}).Resolve(info, "")
	if err != nil || r.BaseURL != "https://res.openai.azure.com" || r.APIVersion != "2025-04-01-preview" {
		t.Fatalf("got %+v, %v", r, err)
	}
}

func TestMask(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		secrets  []string
		gone     []string
		keep     []string
	}{
		{"given secret, last four kept", "401: key " + plantedKey + " rejected", []string{plantedKey}, []string{plantedKey}, []string{"…0000", "rejected"}},
		{"short secrets are ignored", "a test run", []string{"test"}, nil, []string{"a test run"}},
		{"empty secret changes nothing", "hello", []string{""}, nil, []string{"hello"}},
		{"longest first", "k=abcdefgh-ijklmnopqrst", []string{"abcdefgh", "abcdefgh-ijklmnopqrst"}, []string{"abcdefgh", "ijklmnopqrst"}, nil},
		{"openai shape", "Incorrect API key provided: sk-dummy-not-a-key-0000000000", nil, []string{"dummy-not-a-key"}, []string{"sk-[redacted]"}},
		{"google shape", "key AIza-dummy-not-a-key-000000000000000 invalid", nil, []string{"dummy-not-a-key"}, []string{"AIza[redacted]"}},
		{"bearer header", "Authorization: Bearer abc.def-ghi_jkl", nil, []string{"abc.def-ghi_jkl"}, []string{"Bearer [redacted]"}},
		{"api key header", `x-api-key: "zzzzzzzzzzzz"`, nil, []string{"zzzzzzzzzzzz"}, []string{"x-api-key"}},
		{"url query", "GET https://h/v1beta/models?key=abc123&alt=sse failed", nil, []string{"abc123"}, []string{"key=[redacted]&alt=sse"}},
		{"plain text untouched", "rate limit reached for gpt-5.4; retry in 20ms", nil, nil, []string{"rate limit reached for gpt-5.4; retry in 20ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) { masked(t, Mask(tc.in, tc.secrets...), tc.gone, tc.keep) })
	}
}

// masked checks that out holds none of gone and all of keep.
func masked(t *testing.T, out string, gone, keep []string) {
	t.Helper()
	for _, g := range gone {
		if strings.Contains(out, g) {
			t.Errorf("%q still contains %q", out, g)
		}
	}
	for _, k := range keep {
		if !strings.Contains(out, k) {
			t.Errorf("%q lost %q", out, k)
		}
	}
}

func TestMaskErrorKeepsTheChain(t *testing.T) {
	base := &providers.Error{Class: providers.ClassAuth, Message: "bad key " + plantedKey}
	err := MaskError(errors.Join(context.DeadlineExceeded, base), plantedKey)
	if strings.Contains(err.Error(), plantedKey) {
		t.Fatal(err)
	}
	var pe *providers.Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &pe) {
		t.Fatal("the chain is lost")
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), plantedKey) {
			t.Fatalf("unwrapping reaches the key: %q", e)
		}
	}
	if MaskError(nil) != nil {
		t.Fatal("nil must stay nil")
	}
}

type failing struct{ err error }

func (f failing) Step(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
	return providers.Action{}, providers.Usage{Input: 3}, f.err
}

func TestRedactMasksEveryErrorAndKeepsItsClass(t *testing.T) {
	for _, inner := range []error{
		&providers.Error{Class: providers.ClassQuota, Message: "quota for " + plantedKey, Status: 429, RetryAfter: 7},
		&providers.Error{Class: providers.ClassAuth, Err: errors.New("401 " + plantedKey)},
		errors.New("dial tcp: Bearer " + plantedKey),
	} {
		_, u, err := Redact(failing{inner}, plantedKey).Step(context.Background(), providers.Request{})
		if u.Input != 3 {
			t.Error("usage lost")
		}
		for e := err; e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), plantedKey) {
				t.Errorf("leaked: %q", e)
			}
		}
		if providers.ClassOf(err) != providers.ClassOf(inner) {
			t.Errorf("class %s, want %s", providers.ClassOf(err), providers.ClassOf(inner))
		}
		var pe, orig *providers.Error
		if errors.As(inner, &orig) && errors.As(err, &pe) && (pe.Status != orig.Status || pe.RetryAfter != orig.RetryAfter) {
			t.Errorf("status/retry lost: %+v", pe)
		}
	}
	act, _, err := Redact(failing{}, plantedKey).Step(context.Background(), providers.Request{})
	if err != nil || act.Calls != nil {
		t.Fatal("a success passes through")
	}
}

func TestTheMissingKeyErrorSaysHowToProvideIt(t *testing.T) {
	msg := (&MissingKeyError{Backend: "claude", Vars: []string{"ANTHROPIC_API_KEY"}, What: "an API key"}).Error()
	for _, want := range []string{"ANTHROPIC_API_KEY", "in the environment", "ANTHROPIC_API_KEY=… in ./.env or ~/.env", "env entry", "MCP client"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}

// The core tells a keyless backend by providers.ErrMissingKey (it imports
// no keys): every missing-key error must wrap it.
func TestAMissingKeyIsTheProvidersSentinel(t *testing.T) {
	_, err := FromMap(nil).Resolve(providers.BackendInfo{Name: "openai", KeyEnv: []string{"OPENAI_API_KEY"}}, "")
	if !errors.Is(err, providers.ErrMissingKey) {
		t.Fatalf("err %v does not wrap providers.ErrMissingKey", err)
	}
}
