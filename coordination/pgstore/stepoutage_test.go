package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// A blip: the next n reads or writes of one kind meet a connection cut
// mid-query, which the store itself calls an outage (Unavailable).
type blip struct{ left atomic.Int32 }

func (b *blip) hit(what string) error {
	if b.left.Add(-1) >= 0 {
		return fmt.Errorf("%s: %w", what, io.ErrUnexpectedEOF)
	}
	return nil
}

// blippyStore is a replica's store whose images, questions and snapshots
// meet such blips.
type blippyStore struct {
	*Store
	images, questions, snapshots blip
}

func (s *blippyStore) Image(ctx context.Context, id, sum string) ([]byte, error) {
	if err := s.images.hit("reading image " + sum); err != nil {
		return nil, err
	}
	return s.Store.Image(ctx, id, sum)
}

func (s *blippyStore) PostQuestion(ctx context.Context, id string, q coordination.Question) error {
	if err := s.questions.hit("storing question " + q.ID); err != nil {
		return err
	}
	return s.Store.PostQuestion(ctx, id, q)
}

func (s *blippyStore) Snapshots(id string) workspace.Remote {
	return blippySnapshots{Remote: s.Store.Snapshots(id), b: &s.snapshots}
}

type blippySnapshots struct {
	workspace.Remote
	b *blip
}

func (r blippySnapshots) Manifest(agent string, step int) (*workspace.Manifest, bool, error) {
	if step > 0 { // an answer's snapshot is staged on its agent's latest
		if err := r.b.hit("reading a snapshot"); err != nil {
			return nil, false, err
		}
	}
	return r.Remote.Manifest(agent, step)
}

func (r blippySnapshots) Steps(agent string) ([]int, error) {
	if err := r.b.hit("listing snapshots"); err != nil {
		return nil, err
	}
	return r.Remote.Steps(agent)
}

// failedEntries are the error entries of session id's ledger whose message
// has what in it.
func failedEntries(t *testing.T, st *Store, id, what string) []string {
	t.Helper()
	l, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for agent, es := range l.Agents {
		for _, e := range es {
			if e.Kind == coordination.KindError && strings.Contains(e.Message, what) {
				out = append(out, fmt.Sprintf("%s step %d: %s", agent, e.Step, e.Message))
			}
		}
	}
	return out
}

// TestAStepWaitsOutAnOutageReadingTheTasksImages: the store is unreachable
// as steps read the task's images. They wait and go on, as a landing does;
// the reads were recorded as the agents failing (ClassProvider), which
// counts toward dropping them.
func TestAStepWaitsOutAnOutageReadingTheTasksImages(t *testing.T) {
	st := &blippyStore{Store: replicas(t, 1)[0]}
	models, _, provs := coordtest.Team(t, 3)
	h := &coordtest.Harness{T: t, Providers: provs}
	svc := coordination.NewService(st, coordination.Options{Open: h.Open, Logger: zerolog.Nop()})
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 40, 40))); err != nil {
		t.Fatal(err)
	}
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Models: models, Task: "What is drawn here?",
		Images: []coordination.ImageInput{{Data: img.Bytes(), From: "sketch.png"}}})
	if err != nil {
		t.Fatal(err)
	}
	st.images.left.Store(3)
	if _, err := svc.Run(context.Background(), s.ID, nil); err != nil {
		t.Fatal(err)
	}
	if failed := failedEntries(t, st.Store, s.ID, "reading image"); len(failed) > 0 {
		t.Fatalf("an outage reading images was recorded as agents failing: %q", failed)
	}
	if st.images.left.Load() >= 0 {
		t.Fatal("the images were never read through the blip")
	}
}

// TestAPersonIsAskedThroughAnOutage: the store is unreachable as a human
// agent's step posts its question. The step waits and asks; the failure to
// ask was recorded as the person's step failing.
func TestAPersonIsAskedThroughAnOutage(t *testing.T) {
	st := &blippyStore{Store: replicas(t, 1)[0]}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop()})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", SessionID: "asked_through",
		Agents: []coordination.Agent{{ID: "me", Model: "human"}, {ID: "bot_a", Model: "sim/strong"}},
		Rules:  coordination.Rules{TimeoutSeconds: 30}})
	if err != nil {
		t.Fatal(err)
	}
	st.questions.left.Store(2)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the person, answering whatever is asked
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			open, _ := svc.OpenQuestions(ctx, s.ID)
			for _, q := range open {
				reply := map[string]any{"answer": "391"}
				if props, _ := q.Schema["properties"].(map[string]any); props["vote"] != nil {
					choices, _ := props["vote"].(map[string]any)["enum"].([]any)
					reply = map[string]any{"vote": choices[0], "reason": "right"}
				}
				_ = svc.AnswerQuestion(ctx, s.ID, q.ID, providers.Reply{Action: providers.ReplyAccept, Content: reply})
			}
		}
	}()
	if _, err := svc.Run(ctx, s.ID, nil); err != nil {
		t.Fatal(err)
	}
	if failed := failedEntries(t, st.Store, s.ID, "could not ask"); len(failed) > 0 {
		t.Fatalf("an outage asking the person was recorded as their step failing: %q", failed)
	}
	if st.questions.left.Load() >= 0 {
		t.Fatal("the question was never posted through the blip")
	}
}

// TestAnAnswersSnapshotWaitsOutAnOutage: the store is unreachable as an
// answer's workspace is snapshotted. The landing waits and snapshots it;
// the paid answer was turned into an error ("could not be snapshotted").
func TestAnAnswersSnapshotWaitsOutAnOutage(t *testing.T) {
	st := &blippyStore{Store: replicaWithFiles(t, pgtest.Schema(t))}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := int64(1)
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "Fix it", Models: []string{"sim", "sim"}, Seed: &seed,
		Contexts: []workspace.Context{{Path: src, Permission: workspace.Write}}})
	if err != nil {
		t.Fatal(err)
	}
	st.snapshots.left.Store(2)
	if _, err := svc.Run(context.Background(), s.ID, nil); err != nil {
		t.Fatal(err)
	}
	if failed := failedEntries(t, st.Store, s.ID, "snapshotted"); len(failed) > 0 {
		t.Fatalf("an outage snapshotting answers turned them into errors: %q", failed)
	}
	if st.snapshots.left.Load() >= 0 {
		t.Fatal("no snapshot met the blip")
	}
}
