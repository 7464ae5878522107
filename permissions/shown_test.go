package permissions

import "testing"

// Shown writes what a screen would act on as its escape, keeps what it
// shows, and is idempotent.
func TestShownEscapesWhatAScreenActsOn(t *testing.T) {
	for in, want := range map[string]string{
		"go test ./...":                 "go test ./...",
		"echo 'héllo 世界' | wc -c":       "echo 'héllo 世界' | wc -c",
		"ls\nrm -rf src":                `ls\nrm -rf src`,
		"ok\x1b[2K\rgone":               `ok\x1b[2K\rgone`,
		"a\u202eb\u2066c\u200bd":        `a\u202eb\u2066c\u200bd`,
		"bad \xff byte":                 `bad \xff byte`,
		`grep 'a\|b' x`:                 `grep 'a\|b' x`,
		"tab\there\x00nul\x7fdel\u0085": `tab\there\x00nul\x7fdel\u0085`,
	} {
		got := Shown(in)
		if got != want {
			t.Errorf("Shown(%q) = %q; want %q", in, got, want)
		}
		if again := Shown(got); again != got {
			t.Errorf("Shown is not idempotent on %q: %q", got, again)
		}
	}
}
