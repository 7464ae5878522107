package coordination_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

func fileService(t *testing.T) (*coordination.Service, *filestore.Store, string) {
	t.Helper()
	state := t.TempDir()
	store := filestore.New(state)
	return coordination.NewService(store, coordination.Options{Open: backends.Open}), store, state
}

func simTeam(id string) coordination.TeamSpec {
	seed := int64(7)
	return coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/strong", "sim/strong", "sim"}, SessionID: id, Seed: &seed}
}

func finishedSession(t *testing.T) (*coordination.Service, *filestore.Store, string) {
	t.Helper()
	svc, store, _ := fileService(t)
	ctx := context.Background()
	s, err := svc.Create(ctx, simTeam("team_integrity"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil || res.Status != coordination.StatusFinished {
		t.Fatalf("run = %+v, %v", res, err)
	}
	return svc, store, s.ID
}

// A truncated answer.json in a session of ours is damage: the ledger read
// fails with the file's path rather than quietly losing the answer, and the
// session does not run again until it is repaired.
func TestDamagedStepFileStopsTheSessionWithItsPath(t *testing.T) {
	for _, name := range []string{"answer.json", "vote.json"} {
		t.Run(name, func(t *testing.T) {
			_, store, id := finishedSession(t)
			ctx := context.Background()
			// A fresh process: the first store keeps the steps it parsed.
			store = filestore.New(filepath.Dir(filepath.Dir(store.Dir(id))))
			svc := coordination.NewService(store, coordination.Options{Open: backends.Open})
			matches, _ := filepath.Glob(filepath.Join(store.Dir(id), "agents", "*", "*", name))
			if len(matches) == 0 {
				t.Fatalf("no %s written", name)
			}
			victim := matches[0]
			data, _ := os.ReadFile(victim)
			if err := os.WriteFile(victim, data[:len(data)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := store.Ledger(ctx, id)
			if !errors.Is(err, coordination.ErrDamaged) || !strings.Contains(err.Error(), victim) || !strings.Contains(err.Error(), "fsck") {
				t.Fatalf("Ledger with a torn %s = %v; want ErrDamaged naming %s and fsck", name, err, victim)
			}
			if _, err := svc.Status(ctx, id); !errors.Is(err, coordination.ErrDamaged) {
				t.Errorf("status of a damaged session = %v; want ErrDamaged", err)
			}
			if _, _, err := svc.Start(ctx, id); !errors.Is(err, coordination.ErrDamaged) {
				t.Errorf("starting a damaged session = %v; want ErrDamaged", err)
			}
		})
	}
}

// Derived files are rebuilt from the ledger when a session is opened for
// writing, never by a read-only status.
func TestDerivedFilesAreRebuiltWhenOpenedForWritingOnly(t *testing.T) {
	_, store, id := finishedSession(t)
	ctx := context.Background()
	store = filestore.New(filepath.Dir(filepath.Dir(store.Dir(id))))
	svc := coordination.NewService(store, coordination.Options{Open: backends.Open})
	dir := store.Dir(id)
	want, _ := os.ReadFile(filepath.Join(dir, "final", "result.json"))
	wantAnswer, _ := os.ReadFile(filepath.Join(dir, "final", "answer.md"))
	garble := map[string]string{
		"status.json":                     `{"meta": {"session_id": "tea`,
		"final/result.json":               "\x00\x01garbage",
		"agents/agent_a/last_action.json": `{"agent_id": `,
	}
	for name, text := range garble {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	if _, err := svc.Status(ctx, id); err != nil {
		t.Fatal(err)
	}
	for name, text := range garble {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != text {
			t.Errorf("read-only status rewrote %s", name)
		}
	}
	if err := svc.OpenForWriting(ctx, id); err != nil {
		t.Fatal(err)
	}
	for name := range garble {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !json.Valid(data) {
			t.Errorf("%s after opening for writing: %q, %v; want it rebuilt", name, data, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "final", "result.json")); string(got) != strings.TrimSpace(string(want)) && string(got) != string(want) {
		t.Errorf("rebuilt result.json differs from the one written at the end:\n%s\nwant\n%s", got, want)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "final", "answer.md")); string(got) != string(wantAnswer) {
		t.Errorf("answer.md = %q, want %q", got, wantAnswer)
	}
	aside, _ := filepath.Glob(filepath.Join(dir, "final", "result.json.damaged-*"))
	if len(aside) != 1 {
		t.Errorf("the damaged result.json was not moved aside: %v", aside)
	} else if got, _ := os.ReadFile(aside[0]); string(got) != garble["final/result.json"] {
		t.Errorf("moved-aside result.json = %q; want the damaged bytes kept", got)
	}
	if probs, err := store.Check(ctx, id); err != nil || len(probs) != 0 {
		t.Errorf("Check after reopening = %+v, %v; want clean", probs, err)
	}
}

// SIGKILL mid-step leaves .NNN.tmp-* directories: opening the session for
// writing removes those of agents whose step lock is free, and never one of
// a step in flight.
func TestOpeningRemovesTempsOnlyOfFreeAgents(t *testing.T) {
	svc, store, _ := fileService(t)
	ctx := context.Background()
	spec := simTeam("team_temps")
	spec.Driver = coordination.DriverStep
	s, err := svc.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := store.Dir(s.ID)
	free := filepath.Join(dir, "agents", "agent_a", ".001.tmp-123")
	busy := filepath.Join(dir, "agents", "agent_b", ".001.tmp-456")
	for _, d := range []string{free, busy} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "answer.json"), []byte(`{"answer": "half`), 0o644)
	}
	lock, err := store.LockStep(ctx, s.ID, "agent_b") // a step in flight
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if err := svc.OpenForWriting(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(free); !os.IsNotExist(err) {
		t.Errorf("temp of a free agent left: %v", err)
	}
	if _, err := os.Stat(busy); err != nil {
		t.Errorf("temp of a step in flight removed: %v", err)
	}
}

// Concurrent identical creates with a client-chosen id all get the one
// session; different settings under the id stay an error.
func TestCreateWithClientIDIsIdempotent(t *testing.T) {
	svc, _, _ := fileService(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	got := make([]*coordination.Session, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = svc.Create(ctx, simTeam("team_same"))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("create %d of 6 identical: %v", i, err)
		}
		if got[i].ID != "team_same" || !got[i].CreatedAt.Equal(got[0].CreatedAt) {
			t.Errorf("create %d returned %s created %v; want the one session", i, got[i].ID, got[i].CreatedAt)
		}
	}
	other := simTeam("team_same")
	other.Models = []string{"sim", "sim", "sim"}
	if _, err := svc.Create(ctx, other); !errors.Is(err, coordination.ErrSessionExists) || !strings.Contains(err.Error(), "team") {
		t.Errorf("create with another team = %v; want ErrSessionExists naming the team", err)
	}
	task := simTeam("team_same")
	task.Task = "What is 2 + 2?"
	if _, err := svc.Create(ctx, task); !errors.Is(err, coordination.ErrSessionExists) {
		t.Errorf("create with another task = %v; want ErrSessionExists", err)
	}
	seed := simTeam("team_same")
	s2 := int64(8)
	seed.Seed = &s2
	if _, err := svc.Create(ctx, seed); !errors.Is(err, coordination.ErrSessionExists) {
		t.Errorf("create with another seed = %v; want ErrSessionExists", err)
	}
}
