package webui

import (
	"archive/zip"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// maxZip caps the bytes of the winner's files one zip carries.
const maxZip = 64 << 20

// file serves one file of an answer's snapshot as plain text to view in the
// browser: never as HTML or script (nosniff, a sandboxing CSP), whatever it
// holds.
func (h *Handler) file(w http.ResponseWriter, r *http.Request) {
	svc := h.host.RequestService(r.Context())
	snap, err := svc.AnswerFiles(r.Context(), r.PathValue("id"), r.PathValue("label"), r.PathValue("path"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(snap.Content)
}

// filesZip sends the winner's files as one zip.
func (h *Handler) filesZip(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	svc := h.host.RequestService(ctx)
	id := r.PathValue("id")
	res, err := svc.Result(ctx, id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if res.Winner == nil {
		http.Error(w, "the session has no winner yet, so no files to download", http.StatusNotFound)
		return
	}
	label := res.Winner.Label
	snap, err := svc.AnswerFiles(ctx, id, label, "")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var total int64
	for _, f := range snap.Files {
		total += f.Bytes
	}
	if total > maxZip {
		http.Error(w, fmt.Sprintf("the winner's files are %d bytes, more than a download carries (%d MiB); apply them with apply_changes or copy them from the session's final/files", total, maxZip>>20), http.StatusRequestEntityTooLarge)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", safeName(id)+"-"+safeName(label)+".zip"))
	zw := zip.NewWriter(w)
	for _, f := range snap.Files {
		if !zipSafe(f.Path) {
			continue
		}
		one, err := svc.AnswerFilesWithin(ctx, id, label, f.Path, maxZip)
		if errors.Is(err, coordination.ErrBadInput) {
			// A symlink, which no file of the snapshot stands behind (and
			// which, unpacked, could point anywhere): left out, as a
			// refused name is, rather than cutting the zip short at it.
			continue
		}
		if err != nil {
			// Headers are gone: a truncated zip is what the browser sees.
			h.opts.Logger.Warn().Err(err).Str("session", id).Str("file", f.Path).Msg("a file of the winner's zip could not be read")
			return
		}
		fw, err := zw.Create(f.Path)
		if err != nil {
			return
		}
		if _, err := fw.Write(one.Content); err != nil {
			return
		}
	}
	_ = zw.Close()
}

// safeName keeps a file name to letters, digits, '.', '_' and '-'.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

// zipSafe refuses a name that would unpack outside the folder it is
// unpacked in.
func zipSafe(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}
