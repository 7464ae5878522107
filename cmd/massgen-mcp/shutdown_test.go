package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestShutdownLeavesARunThatDoesNotStopWithinItsBound: a run whose model
// call ignores its cancel (as a stop waiting out a store outage does) holds
// the HTTP server's stop no longer than HTTPOptions.ShutdownTimeout.
func TestShutdownLeavesARunThatDoesNotStopWithinItsBound(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	called := make(chan struct{}, 2)
	deaf := providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
		called <- struct{}{}
		<-release
		return providers.Action{}, providers.Usage{}, context.Canceled
	})
	svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(),
		Open: func(providers.Spec) (providers.Provider, error) { return deaf, nil }})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Start(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	<-called
	<-called

	ctx, stop := context.WithCancel(context.Background())
	listening := make(chan struct{})
	served := make(chan error, 1)
	srv := mcp.New(svc, mcp.Options{Logger: zerolog.Nop()})
	go func() {
		served <- srv.ListenAndServeHTTP(ctx, mcp.HTTPOptions{Addr: "127.0.0.1:0", ShutdownTimeout: 300 * time.Millisecond,
			Ready: func(net.Addr) { close(listening) }})
	}()
	<-listening
	asked := time.Now()
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(asked); took > 2*time.Second {
			t.Errorf("the server took %v to stop, want about its 300ms bound", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server's stop waited for a run that does not stop, past its bound")
	}
}
