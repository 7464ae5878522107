package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Logins keeps the web view's browser logins in the database, so that every
// replica honours a login made through any of them and a logout through one
// ends it on all (serve adapts it to webui.LoginKeeper). A login's cookie
// is kept as its SHA-256 only; expired logins are deleted as new ones are
// kept.
type Logins struct{ db *DB }

// maxLoginsPerTenant bounds a tenant's logins kept.
const maxLoginsPerTenant = 1024

// Logins are the database's browser logins.
func (db *DB) Logins() Logins { return Logins{db} }

func loginKey(cookie string) string {
	sum := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(sum[:])
}

// Keep records a login: the tenant, CSRF token and credential (the
// fingerprint of the token it logged in with) of the browser holding
// cookie, until expires.
func (u Logins) Keep(ctx context.Context, cookie, tenant, csrf, credential string, expires time.Time) error {
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM ui_logins WHERE expires_at < now()`)
	// A tenant's logins are capped as the memory's are (the oldest go):
	// a token's holder logging in in a loop must not grow the table.
	b.Queue(`DELETE FROM ui_logins WHERE tenant = $1 AND id_sha256 IN
		(SELECT id_sha256 FROM ui_logins WHERE tenant = $1 ORDER BY expires_at DESC OFFSET $2)`, tenant, maxLoginsPerTenant-1)
	b.Queue(`INSERT INTO ui_logins (id_sha256, tenant, csrf, credential, expires_at) VALUES ($1, $2, $3, $4, $5)`, loginKey(cookie), tenant, csrf, credential, expires)
	if err := u.db.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("keeping a browser's login: %w", err)
	}
	return nil
}

// Find reads the live login of cookie; ok is false for none (never made,
// ended or expired).
func (u Logins) Find(ctx context.Context, cookie string) (tenant, csrf, credential string, expires time.Time, ok bool, err error) {
	err = u.db.pool.QueryRow(ctx, `SELECT tenant, csrf, credential, expires_at FROM ui_logins WHERE id_sha256 = $1 AND expires_at > now()`, loginKey(cookie)).
		Scan(&tenant, &csrf, &credential, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", "", time.Time{}, false, nil
	}
	if err != nil {
		return "", "", "", time.Time{}, false, fmt.Errorf("reading a browser's login: %w", err)
	}
	return tenant, csrf, credential, expires.UTC(), true, nil
}

// End deletes the login of cookie (a logout).
func (u Logins) End(ctx context.Context, cookie string) error {
	if _, err := u.db.pool.Exec(ctx, `DELETE FROM ui_logins WHERE id_sha256 = $1`, loginKey(cookie)); err != nil {
		return fmt.Errorf("ending a browser's login: %w", err)
	}
	return nil
}
