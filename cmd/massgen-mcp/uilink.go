package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/webui"
)

// uiLinkCommand prints a new one-time login link for a running serve
// --http's web view, without restarting it: the link travels through the
// state directory the two share (webui/links.go), never over the network.
func uiLinkCommand() *cobra.Command {
	var dir, base string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "ui-link [--state-dir DIR] [--ttl 15m] [--url http://host:port]",
		Short: "Print a new one-time login link for the running server's web view (no restart)",
		Long: `Print a one-time login link for the web view of 'massgen-mcp serve --http' running on
the same state directory. The link logs one browser in as the default tenant, once, and
expires after --ttl if nobody opens it. It is written into <state-dir>/ui-links/, which
only this user can read; the server finds it there, so no endpoint hands out logins.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			links := webui.LinkDir(stateDir(dir))
			if base == "" {
				var err error
				if base, err = webui.ReadAddress(links); err != nil {
					return err
				}
			}
			base = strings.TrimRight(base, "/")
			// A link for a server that is not there would only fail later,
			// in a browser: say so now. Only a warning: a server with a
			// certificate this machine does not trust still takes the link.
			client := &http.Client{Timeout: 5 * time.Second}
			if resp, err := client.Get(base + "/healthz"); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "massgen-mcp: warning: no server answered at %s (%v); the link works once 'massgen-mcp serve --http …' runs on this --state-dir (or pass the right --url)\n", base, err)
			} else {
				resp.Body.Close()
			}
			key, err := webui.MintLink(links, ttl)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s/ui/login?key=%s\n", base, key)
			fmt.Fprintf(cmd.ErrOrStderr(), "massgen-mcp: the link logs one browser in, once, within %s\n", ttl)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "state-dir", "", "the running server's state directory (default $MASSGEN_STATE_DIR or ./.massgen)")
	cmd.Flags().DurationVar(&ttl, "ttl", 15*time.Minute, "how long the link waits to be opened")
	cmd.Flags().StringVar(&base, "url", "", "the server's address, e.g. http://127.0.0.1:8080 (default: the one serve left in the state directory)")
	return cmd
}
