package cliagent

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// LoginRule says what a refresh of one of a CLI's login files may change,
// so that the copy-back (configdir.go) takes a refresh of the user's own
// account and nothing else. An agent's command in the sandbox can write the
// run's copy: a copy-back taking any JSON would let it put another account's
// tokens (an attacker's) in the user's login, and the user's own later
// sessions, their prompts and code, would go to that account.
type LoginRule struct {
	// Tokens are the fields (each a path of keys) a refresh rewrites: the
	// access token, its expiry, a rotated refresh token (and what a
	// refresh answers beside them, as a plan's name). Every other field
	// must come back as it was, and every token field the login had must
	// still be there.
	Tokens [][]string
	// Account names the account a login is of, from its fields (and the
	// claims of its tokens, Claims), "" when it names none. A login whose
	// account is not the one copied in is refused. Nil: the file names no
	// account, and only Tokens and the fields kept as they were guard it.
	Account func(login map[string]any) string
}

// Refresh tells why now is not a refresh of the login was of the same
// account (nil when it is).
func (r LoginRule) Refresh(was, now []byte) error {
	var before, after map[string]any
	if json.Unmarshal(was, &before) != nil || before == nil {
		return errors.New("the login copied in was not a JSON object, so its account cannot be told")
	}
	if json.Unmarshal(now, &after) != nil || after == nil {
		return errors.New("the run left it not a JSON object")
	}
	if r.Account != nil {
		acct := r.Account(before)
		if acct == "" {
			return errors.New("the login copied in names no account, so a change cannot be told to be its own refresh")
		}
		if r.Account(after) != acct {
			return errors.New("the run left the login of another account")
		}
	}
	for _, path := range r.Tokens {
		_, had := at(before, path)
		if _, has := at(after, path); had && !has {
			return fmt.Errorf("the run removed its %s", strings.Join(path, "."))
		}
		drop(before, path)
		drop(after, path)
	}
	if !reflect.DeepEqual(before, after) {
		return errors.New("the run changed more of it than a refresh's tokens")
	}
	return nil
}

// Claims are the claims of a JSON Web Token (an id or access token), or nil
// when tok is none. The signature is not checked: a claim names the account
// a token is of for the comparison of a refresh with the login it
// refreshes; a forged one does not sign a request in, so an access token
// claiming the user's account while of another is refused by its API.
func Claims(tok string) map[string]any {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil
	}
	body, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil
	}
	var claims map[string]any
	if json.Unmarshal(body, &claims) != nil {
		return nil
	}
	return claims
}

// Field is the string at path of a login (or of a token's claims), ""
// when there is none.
func Field(m map[string]any, path ...string) string {
	v, _ := at(m, path)
	s, _ := v.(string)
	return s
}

// at is the value at path of m, and whether there is one.
func at(m map[string]any, path []string) (any, bool) {
	var v any = m
	for _, k := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// drop removes the value at path of m, if there is one.
func drop(m map[string]any, path []string) {
	parent, ok := at(m, path[:len(path)-1])
	if obj, isObj := parent.(map[string]any); ok && isObj {
		delete(obj, path[len(path)-1])
	}
}

// loginRecord is a copy-back refused (syncBack's warning) as the step's
// tools.jsonl records it, an error of kind "login": the run's record is
// where the user reads what an agent's run did, and this package has no
// log of its own.
func loginRecord(warning string) providers.ToolRecord {
	args, _ := json.Marshal(map[string]string{"warning": warning})
	return providers.ToolRecord{Kind: "login", Name: "copy back login", Arguments: args, IsError: true, Started: time.Now()}
}
