//go:build !linux

package pgstore

import (
	"syscall"
	"time"
)

// userTimeout is Linux's alone; elsewhere the keepalive probes stand alone.
func userTimeout(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}
