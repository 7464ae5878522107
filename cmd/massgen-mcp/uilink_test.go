package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ui-link, run beside a serve --http on the same state directory, prints a
// link that logs one browser in as the default tenant, once, without a
// restart; a link past its --ttl logs nobody in; the directory the links
// travel through is the user's alone and never holds a key itself; with no
// server ever started on the state directory, ui-link says what to do.
func TestUILinkLogsInABrowserOnceWithoutARestart(t *testing.T) {
	t.Parallel() // waits on processes
	bin := serveBinary(t)
	state := t.TempDir()
	srv := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--state-dir", state)
	srv.Env = append(os.Environ(), "MASSGEN_MCP_TOKEN=")
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	base := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
		}
		if strings.Contains(sc.Text(), "one-time login link") {
			break
		}
	}
	if base == "" {
		t.Fatal("serve never said where it listens")
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	uiLink := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		c := exec.Command(bin, append([]string{"ui-link", "--state-dir", state}, args...)...)
		c.Stdout, c.Stderr = &out, &errOut
		err := c.Run()
		return strings.TrimSpace(out.String()), errOut.String(), err
	}
	open := func(link string) (*http.Response, *http.Client) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp, c
	}

	link, errOut, err := uiLink()
	if err != nil || !strings.HasPrefix(link, base+"/ui/login?key=") {
		t.Fatalf("ui-link: %v, printed %q\n%s", err, link, errOut)
	}
	resp, c := open(link)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
		t.Fatalf("opening the link: %d → %q, want 303 → /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
	if ck := resp.Header.Get("Set-Cookie"); !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict") {
		t.Errorf("the link's cookie is %q; want HttpOnly and SameSite=Strict", ck)
	}
	list, err := c.Get(base + "/ui/api/sessions")
	if err != nil || list.StatusCode != http.StatusOK {
		t.Fatalf("the logged-in browser's session list: %v %v", err, list)
	}
	list.Body.Close()
	if again, _ := open(link); again.StatusCode != http.StatusForbidden {
		t.Errorf("the link opened a second time: %d, want 403", again.StatusCode)
	}

	// What the directory holds: no key, only for this user.
	key := strings.TrimPrefix(link, base+"/ui/login?key=")
	dir := filepath.Join(state, "ui-links")
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("ui-links: %v %v, want a directory of mode 0700", fi, err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if strings.Contains(e.Name()+string(b), key) {
			t.Errorf("%s holds the key itself", e.Name())
		}
	}

	short, _, err := uiLink("--ttl", "1s")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if late, _ := open(short); late.StatusCode != http.StatusForbidden {
		t.Errorf("a link opened past its ttl: %d, want 403", late.StatusCode)
	}

	if _, errOut, err := uiLink("--state-dir", t.TempDir()); err == nil || !strings.Contains(errOut, "no server has served the web view") {
		t.Errorf("ui-link without a server: %v\n%s", err, errOut)
	}
}
