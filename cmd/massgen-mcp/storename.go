package main

import (
	"regexp"
	"strings"
)

// aStoreWord is a --store value that can be repeated in an error as it is:
// a word ("file", "memory", a typo of them), never a connection string.
var aStoreWord = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)

// aScheme is a URL's scheme (RFC 3986), which carries no secret.
var aScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]{0,31}$`)

// storeNamed says what --store (or $MASSGEN_STORE) was given, for an error
// that refuses it, without repeating a connection string: one that is not
// recognised may still carry a password (a key=value DSN, an upper-case or
// driver-qualified scheme), and errors are printed, pasted and logged.
func storeNamed(v string) string {
	switch {
	case aStoreWord.MatchString(v):
		return `"` + v + `"`
	case strings.Contains(v, "://"):
		scheme, _, _ := strings.Cut(v, "://")
		if !aScheme.MatchString(scheme) {
			scheme = "an unknown scheme"
		}
		return `a URL of scheme "` + scheme + `" (the scheme must be postgres:// or postgresql://, in lower case)`
	case strings.Contains(v, "="):
		return "a key=value connection string (give the database as a postgres:// URL instead)"
	}
	return "a value that is neither a store's name nor a URL"
}
