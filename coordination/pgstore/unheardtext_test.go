package pgstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestTheLookFindsARecordByTheTextItsWriteSent: the look matches a record
// in doubt by its time and its JSON text as the write sent it, which holds
// only while permission_log.record is json, kept as sent: a jsonb column
// would order keys, drop spaces and rewrite escapes, and a record with any
// of them, masked or not, would never be found, its change never heard.
func TestTheLookFindsARecordByTheTextItsWriteSent(t *testing.T) {
	l := newLostAnswer(t)
	ctx := context.Background()
	rec := permissions.Record{Time: time.Now(), Agent: "agent_a", Tool: "run_command",
		Action: permissions.Action{Kind: permissions.Exec, Target: "curl -H 'Authorization: ****' \"a<b>&c\" \x00 é \u2028 \U0001F600 1e3"},
		Risk:   permissions.RiskLocal, Verdict: permissions.Allow, Rule: "role workspace, key=****", Outcome: permissions.Allowed}
	if err := l.a.AppendPermission(ctx, "s", rec); err != nil {
		t.Fatal(err)
	}
	rec.Time = ms(rec.Time)
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	d := doubted{tenant: l.a.tenant, id: "s", records: []doubtedRecord{{at: rec.Time, text: string(data)}}, seq: 7}
	other := d
	other.tenant, other.seq = "tenant-beside", 8 // the same record of another tenant's session s: not stored
	found, err := l.a.db.findRecords(ctx, []doubted{d, other})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0] != 7 {
		t.Fatalf("the look found %v of a record stored as %s, want [7]: its own tenant's, by the text its write sent", found, data)
	}
}
