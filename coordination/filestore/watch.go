package filestore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// pollEvery is how often a watch looks at a session's files when inotify is
// not available to it (no inotify on the system, or its watch limit reached).
const pollEvery = 200 * time.Millisecond

// watching is one watched session: its feed and how many watchers share it.
type watching struct {
	dir  string
	feed coordination.Feed
	refs int
	dirs []string      // the directories inotify watches for it
	stop chan struct{} // closes a poll's goroutine (nil with inotify)
}

// watchRole is what a watched directory holds.
type watchRole int

const (
	roleSession watchRole = iota // the session directory: events.jsonl, session_log/, agents/
	roleLog                      // session_log/: one file per session entry
	roleAgents                   // agents/: one directory per agent
	roleAgent                    // agents/<id>/: one directory per step
	roleAsks                     // requests/ or responses/: the permission file handshake
)

// askDirs are the file handshake's directories (permissions.AskFile): a
// person answering an ask must see it appear and go.
var askDirs = []string{"requests", "responses"}

type watchedDir struct {
	w    *watching
	role watchRole
}

// Watch reports the session's changes, whoever makes them: through inotify
// (one instance per store, one watch per directory of the session, shared by
// every watcher of it), or, when inotify cannot watch, by looking at the
// session's files every 200 ms.
func (s *Store) Watch(ctx context.Context, id string) (<-chan coordination.Change, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watched == nil {
		s.watched = make(map[string]*watching)
		s.watchDirs = make(map[string]watchedDir)
	}
	w := s.watched[dir]
	if w == nil {
		w = &watching{dir: dir}
		if !s.notifyLocked(w) {
			// The first look is taken before Watch returns: a change made
			// right after it must differ from what the poll compares with.
			w.stop = make(chan struct{})
			go poll(w, fingerprint(dir), w.stop)
		}
		s.watched[dir] = w
	}
	w.refs++
	return w.feed.Subscribe(ctx, func() { s.unwatch(w) }), nil
}

// unwatch drops one watcher of w, and w's watches with its last.
func (s *Store) unwatch(w *watching) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.refs--; w.refs > 0 {
		return
	}
	delete(s.watched, w.dir)
	if w.stop != nil {
		close(w.stop)
	}
	for _, d := range w.dirs {
		delete(s.watchDirs, d)
		if s.notify != nil {
			_ = s.notify.Remove(d)
		}
	}
	if len(s.watched) == 0 && s.notify != nil {
		// Inotify instances are few (128 per user by default): a store
		// nobody watches holds none.
		_ = s.notify.Close()
		s.notify = nil
	}
}

// notifyLocked sets up inotify watches for w's directories, starting the
// store's inotify instance on first use; false if inotify cannot watch them
// all (then w polls). The caller holds s.mu.
func (s *Store) notifyLocked(w *watching) bool {
	if s.notify == nil {
		if s.notifyFailed {
			return false
		}
		n, err := fsnotify.NewWatcher()
		if err != nil {
			s.notifyFailed = true
			return false
		}
		s.notify = n
		go s.route(n)
	}
	if !s.addLocked(w, w.dir, roleSession) {
		return false
	}
	agents := filepath.Join(w.dir, "agents")
	ok := s.addLocked(w, agents, roleAgents)
	ids, _ := agentDirs(w.dir)
	for _, a := range ids {
		ok = ok && s.addLocked(w, filepath.Join(agents, a), roleAgent)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "session_log")); err == nil {
		ok = ok && s.addLocked(w, filepath.Join(w.dir, "session_log"), roleLog)
	}
	for _, d := range askDirs {
		if _, err := os.Stat(filepath.Join(w.dir, d)); err == nil {
			ok = ok && s.addLocked(w, filepath.Join(w.dir, d), roleAsks)
		}
	}
	if !ok {
		for _, d := range w.dirs {
			delete(s.watchDirs, d)
			_ = s.notify.Remove(d)
		}
		w.dirs = nil
	}
	return ok
}

func (s *Store) addLocked(w *watching, dir string, role watchRole) bool {
	if _, ok := s.watchDirs[dir]; ok {
		return true
	}
	if err := s.notify.Add(dir); err != nil {
		return false
	}
	s.watchDirs[dir] = watchedDir{w: w, role: role}
	w.dirs = append(w.dirs, dir)
	return true
}

// route turns the store's inotify events into changes of the sessions they
// belong to, and watches the directories a session grows (session_log/ on
// its first entry, an agent's directory).
func (s *Store) route(n *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-n.Events:
			if !ok {
				return
			}
			s.routeEvent(ev)
		case _, ok := <-n.Errors:
			if !ok {
				return
			}
			// An overflow loses events: tell every watcher to read again.
			s.mu.Lock()
			for _, w := range s.watched {
				w.feed.Publish(coordination.Change{Steps: true, Session: true, Events: true, Permissions: true})
			}
			s.mu.Unlock()
		}
	}
}

func (s *Store) routeEvent(ev fsnotify.Event) {
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Rename) {
		return
	}
	parent, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	if strings.HasPrefix(name, ".") {
		return // temp files and locks
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	wd, ok := s.watchDirs[parent]
	if !ok {
		return
	}
	var c coordination.Change
	switch wd.role {
	case roleSession:
		switch name {
		case "events.jsonl":
			c.Events = true
		case permissionsName:
			c.Permissions = true
		case "requests", "responses":
			if ev.Has(fsnotify.Create) && s.addLocked(wd.w, ev.Name, roleAsks) {
				c.Permissions = true // a request written before the watch was added
			}
		case "session_log":
			if ev.Has(fsnotify.Create) && s.addLocked(wd.w, ev.Name, roleLog) {
				c.Session = true // entries written before the watch was added
			}
		}
	case roleLog:
		c.Session = ev.Has(fsnotify.Create)
	case roleAgents:
		if ev.Has(fsnotify.Create) && s.addLocked(wd.w, ev.Name, roleAgent) {
			c.Steps = true
		}
	case roleAgent:
		_, isStep := stepNumber(name)
		c.Steps = isStep && ev.Has(fsnotify.Create)
	case roleAsks:
		c.Permissions = ev.Has(fsnotify.Create)
	}
	if c != (coordination.Change{}) {
		wd.w.feed.Publish(c)
	}
}

// poll publishes w's changes by comparing what its files look like every
// pollEvery with last, until stop closes.
func poll(w *watching, last print, stop <-chan struct{}) {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := fingerprint(w.dir)
		c := coordination.Change{Steps: now.steps != last.steps, Session: now.log != last.log, Events: now.events != last.events, Permissions: now.asks != last.asks || now.decisions != last.decisions}
		last = now
		if c != (coordination.Change{}) {
			w.feed.Publish(c)
		}
	}
}

// print is what a poll compares: how many steps and session entries there
// are, how long the timeline is, and the permission handshake's files and
// log (asks, answers, decisions).
type print struct {
	steps, log, asks  int
	events, decisions int64
}

func fingerprint(dir string) print {
	var p print
	ids, _ := agentDirs(dir)
	for _, a := range ids {
		steps, _ := numbered(filepath.Join(dir, "agents", a), "", true)
		p.steps += len(steps)
	}
	entries, _ := numbered(filepath.Join(dir, "session_log"), ".json", false)
	p.log = len(entries)
	if fi, err := os.Stat(filepath.Join(dir, "events.jsonl")); err == nil {
		p.events = fi.Size()
	}
	for _, d := range askDirs {
		files, _ := os.ReadDir(filepath.Join(dir, d))
		p.asks += len(files)
	}
	if fi, err := os.Stat(filepath.Join(dir, permissionsName)); err == nil {
		p.decisions = fi.Size()
	}
	return p
}
