package mcp

import (
	"fmt"
	"strings"
)

// spelling is a tenant name as first written, and its line (0: the default
// tenant, which every server has).
type spelling struct {
	name string
	line int
}

// sameButForCase refuses a tenant whose name equals another's but for letter
// case. On a case-insensitive filesystem (macOS, Windows, a casefold ext4
// directory, SMB, exFAT) the file store would give the two one directory,
// and each would read and write the other's sessions; the rule holds on
// every OS and every store, so moving a state directory or switching stores
// never merges two tenants (docs/DESIGN.md, "The store layout"). Tenant
// names are ASCII, so lower-casing is case folding.
func sameButForCase(spelled map[string]spelling, tenant string, line int) error {
	key := strings.ToLower(tenant)
	first, ok := spelled[key]
	switch {
	case !ok:
		spelled[key] = spelling{tenant, line}
		return nil
	case first.name == tenant:
		return nil // one tenant, several tokens
	case first.line == 0:
		return fmt.Errorf("line %d: tenant %q differs from the default tenant %q only in letter case, and tenant names must differ in more than letter case (on a case-insensitive filesystem they name one directory); write %q for the default tenant, or choose another name", line, tenant, first.name, first.name)
	}
	return fmt.Errorf("line %d: tenant %q differs from tenant %q (line %d) only in letter case, and tenant names must differ in more than letter case: on a case-insensitive filesystem (macOS, Windows) they name one directory, so each would read the other's sessions; spell one tenant the same way on every line, or rename one", line, tenant, first.name, first.line)
}
