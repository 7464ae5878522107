package providers_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestBaseURLQueryGoesWithEveryRequestToItsOrigin: the SDKs drop a base
// URL's query, so BaseURLQuery hands them the base URL without it and a
// client that adds it to each request to that origin — after the request's
// own parameters, never replacing one, and never to another origin; the
// response's Request stays the caller's, so nothing quoting it shows the
// query.
func TestBaseURLQueryGoesWithEveryRequestToItsOrigin(t *testing.T) {
	var mu sync.Mutex
	var got []string
	handler := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Host+" "+r.URL.RequestURI())
		mu.Unlock()
		if r.URL.Path == "/v1/moved" {
			http.Redirect(w, r, "/v1/here", http.StatusFound)
			return
		}
		io.WriteString(w, "ok")
	}
	srv := httptest.NewServer(http.HandlerFunc(handler))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(handler))
	defer other.Close()

	client, base := providers.BaseURLQuery(providers.BoundedBodies(providers.SameHostRedirects(nil)), srv.URL+"/v1?token=T0&api-version=2024-10-21")
	if base != srv.URL+"/v1" {
		t.Fatalf("base URL for the SDK = %q; want it without its query", base)
	}
	for _, u := range []string{base + "/responses", base + "/x?alt=sse", base + "/x?api-version=mine", base + "/moved", other.URL + "/v1/y"} {
		res, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		res.Body.Close()
		if s := res.Request.URL.String(); strings.Contains(s, "token=") {
			t.Errorf("the response's Request is the one sent, with the base URL's query: %s", s)
		}
	}
	h := strings.TrimPrefix(srv.URL, "http://")
	o := strings.TrimPrefix(other.URL, "http://")
	want := []string{
		h + " /v1/responses?token=T0&api-version=2024-10-21",
		h + " /v1/x?alt=sse&token=T0&api-version=2024-10-21",
		h + " /v1/x?api-version=mine&token=T0",
		h + " /v1/moved?token=T0&api-version=2024-10-21",
		h + " /v1/here?token=T0&api-version=2024-10-21",
		o + " /v1/y",
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A base URL without a query is left alone, with the client itself.
	c0 := &http.Client{}
	if c, b := providers.BaseURLQuery(c0, srv.URL+"/v1"); c != c0 || b != srv.URL+"/v1" {
		t.Errorf("BaseURLQuery changed a base URL without a query: %q", b)
	}
}

// TestBaseURLQueryKeepsTheClientsRules: the client BaseURLQuery returns
// still refuses a redirect to another host (SameHostRedirects) and still
// bounds an error body (BoundedBodies).
func TestBaseURLQueryKeepsTheClientsRules(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/away" {
			http.Redirect(w, r, other.URL+"/v1/x", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
		w.Write(make([]byte, providers.MaxErrorBody+1000))
	}))
	defer srv.Close()
	client, base := providers.BaseURLQuery(providers.BoundedBodies(providers.SameHostRedirects(nil)), srv.URL+"/v1?token=T0")
	_, err := client.Get(base + "/away")
	if err == nil || !strings.Contains(err.Error(), "redirected to another host") {
		t.Errorf("a redirect to another host: err = %v; want it refused", err)
	}
	if err != nil && strings.Contains(err.Error(), "T0") {
		t.Errorf("the refusal shows the base URL's query: %v", err)
	}
	res, err := client.Get(base + "/big")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if n, _ := io.Copy(io.Discard, res.Body); n != providers.MaxErrorBody {
		t.Errorf("an error body read %d bytes; want it cut at %d", n, providers.MaxErrorBody)
	}
}
