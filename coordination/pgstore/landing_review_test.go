package pgstore

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestAnAnswerWithANulIsNumberedAndStored: an unnumbered answer whose
// content holds a NUL (which JSON writes as \u0000) lands, numbered, on
// both appends; its number is not read back out of the stored JSON, which
// PostgreSQL refuses to decode with that escape in it.
func TestAnAnswerWithANulIsNumberedAndStored(t *testing.T) {
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	content := "before\x00after"
	for i, release := range []bool{false, true} {
		l, err := a.LockStep(ctx, "s", "agent_a")
		if err != nil {
			t.Fatal(err)
		}
		e := coordination.Entry{Kind: coordination.KindAnswer, Content: content, Label: "x"}
		var got coordination.Entry
		if release {
			got, err = l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, e)
		} else {
			got, err = l.Append(ctx, e)
			l.Release()
		}
		if err != nil || got.AnswerNum != i+1 {
			t.Fatalf("answer %d with a NUL appended as %+v, %v", i+1, got, err)
		}
	}
	lg, err := a.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range lg.Agents["agent_a"] {
		if e.AnswerNum != i+1 || e.Content != content {
			t.Errorf("stored answer %d: %+v", i+1, e)
		}
	}
}

// TestTheAnswerNumberIsTheFirstOfItsKeyInAnEntry: landStep finds where the
// answer number goes by the first `"answer_number":` in the entry's JSON.
// That holds only while every field json.Marshal writes before it is a
// string (its quotes escaped), a number or a time; a map, a raw message or
// a struct there could carry the key first.
func TestTheAnswerNumberIsTheFirstOfItsKeyInAnEntry(t *testing.T) {
	typ := reflect.TypeFor[coordination.Entry]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if strings.HasPrefix(f.Tag.Get("json"), "answer_number") {
			return
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Int, reflect.Int64, reflect.Bool:
		default:
			if f.Type != reflect.TypeFor[interface{ Format(string) string }]() && f.Type.String() != "time.Time" {
				t.Errorf("Entry.%s (%s) comes before AnswerNum: its JSON could hold the answer number's key; move it after, or number answers another way", f.Name, f.Type)
			}
		}
	}
	t.Fatal("Entry has no answer_number field")
}
