package permissions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// An expiry writes two files: the refusal of a lapsed ask, and its record
// in the caller's permission log. A process killed between the two would
// leave a refusal no log holds and no later expiry returns (the ask is
// answered), a gap in the user's record of what was refused. So a refusal
// is marked first (responses/.expiring/<id>), and the mark goes once the
// record is written, or once another answer turned out to stand: the next
// expiry finds a mark a crash left and hands its refusal to the caller
// again, who records it unless its log holds it. Every expiry of a
// directory runs under one lock (responses/.expiring.lock), so a mark it
// reads is no live expiry's and two expiries record one refusal once; a
// person's answer and an asker's own refusal take no lock, and the first
// answer stands as ever (the response is created, never replaced). The
// names start with a dot, as temps and locks do, which watchers ignore.
const (
	expiringDir  = ".expiring"
	expiringLock = ".expiring.lock"
)

// Expire refuses, in their askers' stead, the requests of dir that lapsed
// by cutoff with no answer (by ByTimeout, reason AskerGone): a live asker
// refuses its own at the expiry, so one still open past it had an asker
// that stopped first. record writes each refusal's decision to the
// caller's log: again is false for a refusal this call wrote, true for one
// an earlier call wrote and was killed (or failed) before recording, which
// record then writes only if its log holds no record of r.ID. A request
// answered meanwhile is not refused (the first answer stands). Expire
// returns the refusals record took; a refusal whose record failed is
// handed to record again by the next call. It waits for another expiry
// of dir to end, as a person's answer must (Answer): one that landed while
// another expiry was still to refuse its lapsed ask would stand, and with
// the asker gone nobody would record it.
//
// With nothing lapsed and nothing left to record it only reads the
// requests, as Pending does, and one directory that does not exist.
func Expire(dir string, cutoff time.Time, record func(r ApprovalRequest, again bool) error) ([]ApprovalRequest, error) {
	return expire(dir, cutoff, record, true)
}

// ExpireIfIdle is Expire for a look at the asks (a listing): while another
// expiry of dir runs it returns none at once, leaving the lapsed to that
// one, which may hold the lock across a slow record (an fsync of the
// permission log). A lapsed ask is not listed (Pending) meanwhile.
func ExpireIfIdle(dir string, cutoff time.Time, record func(r ApprovalRequest, again bool) error) ([]ApprovalRequest, error) {
	return expire(dir, cutoff, record, false)
}

func expire(dir string, cutoff time.Time, record func(r ApprovalRequest, again bool) error, wait bool) ([]ApprovalRequest, error) {
	open, err := unanswered(dir)
	marks, merr := marked(dir)
	lapsed := func(r ApprovalRequest) bool { return r.Lapsed(cutoff) }
	if err := errors.Join(err, merr); err != nil || (len(marks) == 0 && !slices.ContainsFunc(open, lapsed)) {
		return nil, err
	}
	unlock, err := lockExpiry(dir, wait)
	if errors.Is(err, errExpiryBusy) {
		return nil, nil // the holder settles what lapsed and every mark
	}
	if err != nil {
		return nil, fmt.Errorf("cannot take the lock that expiries of approval requests share in %s: %w", dir, err)
	}
	defer unlock()
	// Read both again under the lock: an expiry that held it meanwhile
	// may have settled them.
	var out []ApprovalRequest
	marks, err = marked(dir)
	errs := []error{err}
	for _, id := range marks {
		r, ok, err := resume(dir, id, record)
		if ok {
			out = append(out, r)
		}
		errs = append(errs, err)
	}
	open, err = unanswered(dir)
	errs = append(errs, err)
	for _, r := range open {
		if !lapsed(r) {
			continue
		}
		ok, err := refuse(dir, r, record)
		if ok {
			out = append(out, r)
		}
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// refuse refuses r in its gone asker's stead and has record write the
// refusal, marking it first so that a crash at any point leaves the mark
// for the next expiry (resume). The caller holds the expiry lock.
func refuse(dir string, r ApprovalRequest, record func(ApprovalRequest, bool) error) (bool, error) {
	if err := mark(dir, r.ID); err != nil {
		return false, fmt.Errorf("cannot mark the lapsed approval request %s before refusing it: %w", r.ID, err)
	}
	resp := ApprovalResponse{ID: r.ID, By: ByTimeout, Reason: AskerGone, At: time.Now().UTC()}
	err := writeJSON(filepath.Join(dir, "responses", r.ID+".json"), resp, true)
	switch {
	case errors.Is(err, fs.ErrExist):
		// A person's answer, or the asker's own refusal, landed since the
		// request was read; no expiry's did, each holding the lock.
		return false, unmark(dir, r.ID)
	case err != nil:
		// The refusal may stand all the same (its directory's sync
		// failed): the mark stays for the next expiry to tell.
		return false, fmt.Errorf("cannot refuse the lapsed approval request %s: %w", r.ID, err)
	}
	if err := record(r, false); err != nil {
		return false, fmt.Errorf("the refusal of lapsed approval request %s was not recorded; the next look at the session's asks records it: %w", r.ID, err)
	}
	return true, unmark(dir, r.ID)
}

// resume settles a mark an expiry left, killed or failing before it went:
// a refusal in the asker's stead that stands is handed to record again; a
// mark whose request another answer closed goes; one whose request is
// still open stays, for Expire to refuse it, lapsed as it still is. The
// caller holds the expiry lock.
func resume(dir, id string, record func(ApprovalRequest, bool) error) (ApprovalRequest, bool, error) {
	resp, err := readResponse(dir, id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, err := readRequest(dir, id); err == nil {
			return ApprovalRequest{}, false, nil
		}
		return ApprovalRequest{}, false, unmark(dir, id) // no request to refuse
	case err != nil:
		return ApprovalRequest{}, false, fmt.Errorf("cannot read the answer of approval request %s, whose refusal may be unrecorded: %w", id, err)
	case resp.Reason != AskerGone:
		return ApprovalRequest{}, false, unmark(dir, id)
	}
	r, err := readRequest(dir, id)
	if err != nil {
		return ApprovalRequest{}, false, errors.Join(fmt.Errorf("approval request %s, refused in its gone asker's stead, cannot be read to record the refusal: %w", id, err), unmark(dir, id))
	}
	if err := record(r, true); err != nil {
		return ApprovalRequest{}, false, fmt.Errorf("the refusal of lapsed approval request %s was not recorded; the next look at the session's asks records it: %w", id, err)
	}
	return r, true, unmark(dir, id)
}

// marked lists the requests of dir whose refusals are marked; none when no
// expiry ever marked one.
func marked(dir string) ([]string, error) {
	marks, ok, err := marksDir(dir)
	if !ok || err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(marks)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var ids []string
	for _, e := range ents {
		if idRe.MatchString(e.Name()) { // not a crash's temp
			ids = append(ids, e.Name())
		}
	}
	return ids, err
}

// marksDir is dir's directory of marks, and whether it is there. Anything
// but a directory in its place (a symlink planted to elsewhere, a file) is
// refused: an expiry would mark files there and, taking each file named
// like a request id for a crash's mark of a request gone, remove it.
func marksDir(dir string) (string, bool, error) {
	marks := filepath.Join(dir, "responses", expiringDir)
	fi, err := os.Lstat(marks)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return marks, false, nil
	case err != nil:
		return marks, false, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return marks, false, fmt.Errorf("%s is a symlink, where approval expiries keep their marks in a directory of their own; no lapsed ask of the session is refused until it is removed", marks)
	case !fi.IsDir():
		return marks, false, fmt.Errorf("%s is not a directory, where approval expiries keep their marks in one; no lapsed ask of the session is refused until it is removed", marks)
	}
	return marks, true, nil
}

// mark marks the refusal of request id, durably, before it is written; a
// mark already there (a crash's before its refusal) will do.
func mark(dir, id string) error {
	marks := filepath.Join(dir, "responses", expiringDir)
	if err := os.MkdirAll(filepath.Dir(marks), 0o700); err != nil {
		return err
	}
	err := os.Mkdir(marks, 0o700)
	switch {
	case err == nil:
		err = wholefile.SyncDir(filepath.Dir(marks))
	case errors.Is(err, fs.ErrExist):
		_, _, err = marksDir(dir)
	}
	if err != nil {
		return err
	}
	if err := wholefile.Create(filepath.Join(marks, id), nil, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// unmark removes request id's mark. Its removal need not be durable: a
// mark a crash brings back is resumed, and its record is written only if
// the log lacks it. It removes within responses/ only (os.Root), so a
// symlink swapped in for the marks' directory after it was checked leads
// the removal nowhere.
func unmark(dir, id string) error {
	root, err := os.OpenRoot(filepath.Join(dir, "responses"))
	if err == nil {
		err = root.Remove(filepath.Join(expiringDir, id))
		root.Close()
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot remove the mark of approval request %s's recorded refusal (responses/%s/%s), so the next look at the session's asks settles it again: %w", id, expiringDir, id, err)
	}
	return nil
}
