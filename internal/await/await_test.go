package await_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/await"
)

// fatal records a failure instead of ending the test, so a test can see
// what Until said.
type fatal struct {
	testing.TB
	said string
}

func (f *fatal) Helper() {}
func (f *fatal) Fatalf(format string, args ...any) {
	f.said = fmt.Sprintf(format, args...)
	panic(f) // as t.Fatalf ends the goroutine; until recovers
}

func until(limit time.Duration, ready func() bool, ended <-chan error) (said string) {
	f := &fatal{}
	defer func() {
		if r := recover(); r != nil {
			said = f.said
		}
	}()
	await.Until(f, "the CLI's first call", limit, ready, ended)
	return ""
}

func TestUntilFailsAtOnceWhenWhatItWaitsOnEndsFirst(t *testing.T) {
	ended := make(chan error, 1)
	ended <- errors.New("exit status 1")
	start := time.Now()
	said := until(time.Minute, func() bool { return false }, ended)
	if !strings.Contains(said, "ended first") || !strings.Contains(said, "exit status 1") {
		t.Fatalf("said %q; want that the step ended first, with its error", said)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v; want a failure at once, not at the bound", d)
	}
}

func TestUntilReturnsOnceReadyAndFailsAtItsBound(t *testing.T) {
	n := 0
	if said := until(time.Minute, func() bool { n++; return n > 3 }, make(chan error)); said != "" {
		t.Fatalf("said %q; want ready on the fourth look", said)
	}
	if said := until(100*time.Millisecond, func() bool { return false }, make(chan error)); !strings.Contains(said, "not within") {
		t.Fatalf("said %q; want the bound passed", said)
	}
}
