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

// Logins are the database's browser logins.
func (db *DB) Logins() Logins { return Logins{db} }

func loginKey(cookie string) string {
	sum := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(sum[:])
}

// Keep records a login: the tenant and CSRF token of the browser holding
// cookie, until expires.
func (u Logins) Keep(ctx context.Context, cookie, tenant, csrf string, expires time.Time) error {
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM ui_logins WHERE expires_at < now()`)
	b.Queue(`INSERT INTO ui_logins (id_sha256, tenant, csrf, expires_at) VALUES ($1, $2, $3, $4)`, loginKey(cookie), tenant, csrf, expires)
	if err := u.db.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("keeping a browser's login: %w", err)
	}
	return nil
}

// Find reads the live login of cookie; ok is false for none (never made,
// ended or expired).
func (u Logins) Find(ctx context.Context, cookie string) (tenant, csrf string, expires time.Time, ok bool, err error) {
	err = u.db.pool.QueryRow(ctx, `SELECT tenant, csrf, expires_at FROM ui_logins WHERE id_sha256 = $1 AND expires_at > now()`, loginKey(cookie)).
		Scan(&tenant, &csrf, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", time.Time{}, false, nil
	}
	if err != nil {
		return "", "", time.Time{}, false, fmt.Errorf("reading a browser's login: %w", err)
	}
	return tenant, csrf, expires.UTC(), true, nil
}

// End deletes the login of cookie (a logout).
func (u Logins) End(ctx context.Context, cookie string) error {
	if _, err := u.db.pool.Exec(ctx, `DELETE FROM ui_logins WHERE id_sha256 = $1`, loginKey(cookie)); err != nil {
		return fmt.Errorf("ending a browser's login: %w", err)
	}
	return nil
}
