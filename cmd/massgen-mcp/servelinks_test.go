package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestServeOnEveryInterfacePrintsLinksThatWork: serve --http 0.0.0.0:P (or
// [::]:P) printed its MCP URL and login link as http://0.0.0.0:P/… and
// http://[::]:P/…, which work from no other machine and read oddly. The
// links name 127.0.0.1, which works here (the login link is opened), and a
// line says the server listens on every interface and what other machines
// use; the login link's key is still printed once, in its own line only.
func TestServeOnEveryInterfacePrintsLinksThatWork(t *testing.T) {
	t.Parallel() // waits on processes
	bin := serveBinary(t)
	loginLine := regexp.MustCompile(`one-time login link\): (http://127\.0\.0\.1:\d+)/ui/login\?key=(\S+)`)
	for _, listen := range []string{"0.0.0.0:0", "[::]:0"} {
		srv := exec.Command(bin, "serve", "--http", listen, "--state-dir", t.TempDir())
		srv.Env = append(os.Environ(), "MASSGEN_MCP_TOKEN=dummy-test-token-for-links")
		stderr, _ := srv.StderrPipe()
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		var lines []string
		login, key := "", ""
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if m := loginLine.FindStringSubmatch(sc.Text()); m != nil {
				login, key = m[0][strings.Index(m[0], "http"):], m[2]
			}
			if strings.Contains(sc.Text(), "one-time login link") {
				break
			}
		}
		go func() { _, _ = io.Copy(io.Discard, stderr) }()
		all := strings.Join(lines, "\n")
		if m := servingLine.FindStringSubmatch(all); m == nil || !strings.HasPrefix(m[1], "http://127.0.0.1:") {
			t.Errorf("serve --http %s: the MCP URL is not on 127.0.0.1:\n%s", listen, all)
		}
		if strings.Contains(all, "0.0.0.0:") || strings.Contains(all, "[::]:") {
			t.Errorf("serve --http %s prints an unspecified address in its links:\n%s", listen, all)
		}
		if host, _ := os.Hostname(); !strings.Contains(all, "every interface") || !strings.Contains(all, host) {
			t.Errorf("serve --http %s does not say it listens on every interface and what other machines use (%s):\n%s", listen, host, all)
		}
		if key == "" || strings.Count(all, key) != 1 {
			t.Errorf("serve --http %s: the login key is printed %d times, want once:\n%s", listen, strings.Count(all, key), all)
		}
		if login != "" {
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := c.Get(login)
			if err != nil || resp.StatusCode != http.StatusSeeOther {
				t.Errorf("serve --http %s: opening the printed login link: %v %v", listen, err, resp)
			} else {
				resp.Body.Close()
			}
		}
		_ = srv.Process.Kill()
		_ = srv.Wait()
	}
}
