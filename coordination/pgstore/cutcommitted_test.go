package pgstore

import (
	"context"
	"time"

	readiness "github.com/massgen-go/massgen-mcp/internal/await" // pgstore's tests have an await of their own
)

// storedAfterCut counts session s's rows in table once the cut write's have
// come: the server runs what reached it after the client gave up, on a
// machine CI loads with race builds beside it, so the wait is generous
// (3 s was, before; nothing here measures it). It returns 0 rows only after
// readiness.Slow. It takes no t: a dial hook calls it off the test's goroutine.
func storedAfterCut(ctx context.Context, st *Store, table string) (int, error) {
	for end := time.Now().Add(readiness.Slow); ; time.Sleep(10 * time.Millisecond) {
		var n int
		err := st.db.pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE tenant = $1 AND session_id = 's'`, st.tenant).Scan(&n)
		if err != nil || n > 0 || time.Now().After(end) {
			return n, err
		}
	}
}
