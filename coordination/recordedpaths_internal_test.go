package coordination

import "testing"

// A recorded error names the state directory by words only where the path
// is in it: one that merely begins with its text (/srv/mg-archive beside
// /srv/mg) is kept as written, since the record keeps it for good.
func TestARecordedErrorKeepsAPathThatOnlySharesTheStateDirsPrefix(t *testing.T) {
	svc := &Service{opts: Options{StateDir: "/srv/mg"}}
	for msg, want := range map[string]string{
		"open /srv/mg-archive/input.csv: no such file or directory": "open /srv/mg-archive/input.csv: no such file or directory",
		"open /srv/mg/sessions.lock: permission denied":             "open the state directory/sessions.lock: permission denied",
		"cannot write /srv/mg: read-only file system":               "cannot write the state directory: read-only file system",
		"state dir '/srv/mg' and /srv/mgx":                          "state dir 'the state directory' and /srv/mgx",
		"at the end /srv/mg":                                        "at the end the state directory",
	} {
		if got := svc.recordedText(msg); got != want {
			t.Errorf("%q recorded as %q; want %q", msg, got, want)
		}
	}
}
