package main

import (
	"context"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/webui"
)

// loginKeeper is where the web view keeps its logins: in the database
// replicas share, so a browser logged in through one replica is logged in
// on all; nil (the server's memory) for a store of one server.
func loginKeeper(stores coordination.Stores) webui.LoginKeeper {
	if db, ok := stores.(*pgstore.DB); ok {
		return dbLogins{db.Logins()}
	}
	return nil
}

// dbLogins is pgstore.Logins as a webui.LoginKeeper.
type dbLogins struct{ l pgstore.Logins }

func (d dbLogins) Put(ctx context.Context, id string, l webui.Login) error {
	return d.l.Keep(ctx, id, l.Tenant, l.CSRF, l.Credential, l.Expires)
}

func (d dbLogins) Get(ctx context.Context, id string) (webui.Login, bool, error) {
	tenant, csrf, credential, expires, ok, err := d.l.Find(ctx, id)
	return webui.Login{Tenant: tenant, CSRF: csrf, Credential: credential, Expires: expires}, ok, err
}

func (d dbLogins) Delete(ctx context.Context, id string) error { return d.l.End(ctx, id) }
