package webui

import (
	"embed"
	"html/template"
	"net/http"
	"path"
)

// The page's assets, embedded: the binary loads nothing from elsewhere at
// run time, and no npm runs at go install.
//
//go:embed assets
var assets embed.FS

var pages = template.Must(template.ParseFS(assets, "assets/*.html"))

// shell is the one page: the list at /ui/ and a session at /ui/s/{id}; the
// script reads the path. It carries the login's CSRF token.
func (h *Handler) shell(w http.ResponseWriter, r *http.Request) {
	csrf := ""
	if s := who(r.Context()); s != nil {
		csrf = s.csrf
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = pages.ExecuteTemplate(w, "index.html", map[string]string{"CSRF": csrf})
}

// writeLoginForm shows the login page, with what went wrong if anything.
func writeLoginForm(w http.ResponseWriter, status int, problem string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = pages.ExecuteTemplate(w, "login.html", map[string]string{"Problem": problem})
}

// writeLinkConfirm is the page a one-time link opened from another site
// shows instead of logging in: what the link does, and a button that posts
// its key back from this origin.
func writeLinkConfirm(w http.ResponseWriter, key string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = pages.ExecuteTemplate(w, "login.html", map[string]string{"Key": key})
}

// serveAsset serves a script or style sheet; they hold no session data, so
// they need no login.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	ct, ok := types[path.Ext(name)]
	data, err := assets.ReadFile("assets/" + name)
	if !ok || err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(data)
}
