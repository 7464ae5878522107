package fifotest

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// Limit is how long Read lets a read run before calling it stuck on the
// FIFO: a read that does not wait ends at once, so the bound only decides
// how soon a hang fails.
const Limit = 10 * time.Second

// Make makes a FIFO at path, or skips t where FIFOs cannot be made.
func Make(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
}

// Read runs read and returns what it gives. If read has not ended within
// Limit it is taken to be waiting on the FIFO at fifo: Read frees it (so
// no goroutine is left stuck holding what it holds) and fails t with
// stuck.
func Read[T any](t testing.TB, fifo, stuck string, read func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- read() }()
	var v T
	select {
	case v = <-done:
	case <-time.After(Limit):
		unblock(fifo, done)
		t.Fatal(stuck)
	}
	return v
}

// unblock lets the opens stuck on fifo go, as a writer that comes and
// goes, until done says the reader finished.
func unblock[T any](fifo string, done chan T) {
	for {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
