package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

type serveFlags struct {
	stateDir     string
	http         string
	memory       bool
	allowRoots   []string
	allowOrigins []string
	parallel     int
	tlsCert      string
	tlsKey       string
}

func serveCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--state-dir DIR] [--http 127.0.0.1:4000] [--memory] [--allow-root DIR]",
		Short: "Serve the MCP tools over stdio (default) or streamable HTTP",
		Long: `Serve massgen-mcp's MCP tools, resources and prompt.

Without --http it speaks MCP over stdin/stdout (stdout carries only the protocol;
logs go to stderr). When stdin closes, every running team is cancelled and stays
resumable, and the server exits 0.

With --http it serves streamable HTTP at /mcp (both the 2025-11-25 handshake and
the stateless 2026-07-28 protocol) plus GET /healthz. It binds loopback addresses
freely; any other address needs MASSGEN_MCP_TOKEN, a bearer token clients send as
'Authorization: Bearer <token>' (when set, it is required on loopback too).

Context file paths are read only under allowed roots: the working directory for
stdio, none for HTTP, unless --allow-root names some.`,
		Example: `  massgen-mcp serve --state-dir ~/.massgen
  massgen-mcp serve --http 127.0.0.1:4000 --state-dir /tmp/teams
  MASSGEN_MCP_TOKEN=s3cret massgen-mcp serve --http 0.0.0.0:4000 --allow-root ./docs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serve(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.stateDir, "state-dir", "", "where sessions live (default $MASSGEN_STATE_DIR or ./.massgen)")
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP on this address instead of stdio (e.g. 127.0.0.1:4000; a bare port binds 127.0.0.1)")
	fl.BoolVar(&f.memory, "memory", false, "keep sessions in memory only (lost when the server exits)")
	fl.StringArrayVar(&f.allowRoots, "allow-root", nil, "directory under which context file paths may be read (repeatable)")
	fl.StringArrayVar(&f.allowOrigins, "allow-origin", nil, "browser origin allowed besides loopback ones, e.g. https://app.example (repeatable)")
	fl.IntVar(&f.parallel, "parallel", 8, "provider calls at once per run")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file for --http")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS key file for --http")
	return cmd
}

func serve(cmd *cobra.Command, f serveFlags) error {
	ctx := cmd.Context()
	token := os.Getenv("MASSGEN_MCP_TOKEN")
	if f.http != "" {
		f.http = loopbackByDefault(f.http)
		// Refuse an unsafe binding before touching the state directory.
		if err := mcp.CheckBinding(f.http, token); err != nil {
			return fmt.Errorf("%w: %w", coordination.ErrBadInput, err)
		}
	} else if f.tlsCert != "" || f.tlsKey != "" || len(f.allowOrigins) > 0 {
		return fmt.Errorf("%w: --tls-cert, --tls-key and --allow-origin only apply with --http", coordination.ErrBadInput)
	}

	roots, err := allowedRoots(f)
	if err != nil {
		return err
	}
	var svc *coordination.Service
	if f.memory {
		svc = coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, DefaultTeam: backends.DefaultTeam, Parallel: f.parallel, Logger: logger})
	} else {
		svc = newService(stateDir(f.stateDir), f.parallel)
	}
	srv := mcp.New(svc, mcp.Options{Version: version, Roots: roots, Logger: logger})
	// The session timer: step-driven sessions past their timeout or budget
	// are ended even when nobody calls them.
	timerCtx, stopTimer := context.WithCancel(ctx)
	defer stopTimer()
	go svc.RunTimer(timerCtx, 5*time.Second)

	if f.http == "" {
		return srv.ServeStdio(ctx, cmd.InOrStdin(), cmd.OutOrStdout())
	}
	return srv.ListenAndServeHTTP(ctx, mcp.HTTPOptions{
		Addr:           f.http,
		Token:          token,
		AllowedOrigins: f.allowOrigins,
		TLSCert:        f.tlsCert,
		TLSKey:         f.tlsKey,
		Ready: func(addr net.Addr) {
			scheme := "http"
			if f.tlsCert != "" {
				scheme = "https"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "massgen-mcp: serving MCP at %s://%s/mcp (health: /healthz)\n", scheme, addr)
		},
	})
}

// loopbackByDefault binds a bare port ("4000" or ":4000") to 127.0.0.1:
// listening on every interface must be asked for by name (0.0.0.0:4000).
func loopbackByDefault(addr string) string {
	if !strings.Contains(addr, ":") {
		return "127.0.0.1:" + addr
	}
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

// allowedRoots resolves --allow-root; without it, stdio may read under the
// working directory and HTTP nowhere (DESIGN.md §5).
func allowedRoots(f serveFlags) ([]string, error) {
	if len(f.allowRoots) == 0 {
		if f.http != "" {
			return nil, nil
		}
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("cannot find the working directory to allow context files under it: %w", err)
		}
		return []string{wd}, nil
	}
	roots := make([]string, 0, len(f.allowRoots))
	for _, r := range f.allowRoots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("%w: --allow-root %q: %w", coordination.ErrBadInput, r, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: --allow-root %q is not a directory", coordination.ErrBadInput, r)
		}
		roots = append(roots, abs)
	}
	return roots, nil
}
