package install

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/tailscale/hujson"
)

// masked is an entry as a message shows it: every value under an env or
// headers table, and of a member whose name says it is a secret, replaced
// by "***" (a ${env:NAME} reference stays: it is no value), the rest as
// written. A user's own entry often carries keys, and a refusal is printed.
func masked(t target, entry []byte) []byte {
	if t.format == formatTOML {
		return maskTOML(entry)
	}
	v, err := hujson.Parse(bytes.Clone(entry))
	if err != nil {
		return []byte("(an entry that does not parse)")
	}
	maskJSON(&v, false)
	return v.Pack()
}

// secretName tells whether a member's name says its value is a secret.
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"key", "token", "secret", "password", "authorization", "auth", "cookie", "credential"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// holdsSecrets tells whether every value of a table with this name is one
// (env variables, HTTP headers).
func holdsSecrets(name string) bool {
	switch strings.ToLower(name) {
	case "env", "headers", "http_headers", "environment":
		return true
	}
	return false
}

func isReference(s string) bool {
	return strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && !strings.ContainsAny(s[2:len(s)-1], "${} ")
}

const mask = "***"

func maskJSON(v *hujson.Value, all bool) {
	switch x := v.Value.(type) {
	case *hujson.Object:
		for i := range x.Members {
			m := &x.Members[i]
			name := ""
			if lit, ok := m.Name.Value.(hujson.Literal); ok {
				name = lit.String()
			}
			maskJSON(&m.Value, all || holdsSecrets(name) || secretName(name))
		}
	case *hujson.Array:
		for i := range x.Elements {
			maskJSON(&x.Elements[i], all)
		}
	case hujson.Literal:
		if all && x.Kind() == '"' && !isReference(x.String()) {
			v.Value = hujson.String(mask)
		}
	}
}

var (
	tomlHeader = regexp.MustCompile(`^\s*\[\[?\s*([^\]]*?)\s*\]\]?`)
	tomlKey    = regexp.MustCompile(`^\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=`)
	tomlString = regexp.MustCompile(`"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'`)
)

// maskTOML masks the TOML table text line by line: the values under an
// [….env] (or headers) table, of an inline env = {…}, and of keys whose
// name says they are secrets. A multi-line string value is masked whole
// when its key is one to mask.
func maskTOML(entry []byte) []byte {
	var out strings.Builder
	inSecrets := false
	text := string(entry)
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		nl := len(line) < len(text)
		if m := tomlHeader.FindStringSubmatch(line); m != nil && !strings.Contains(line, "=") {
			parts := strings.Split(m[1], ".")
			last := strings.Trim(strings.TrimSpace(parts[len(parts)-1]), `"'`)
			inSecrets = holdsSecrets(last)
			out.WriteString(line)
		} else if k := tomlKey.FindStringSubmatchIndex(line); k != nil {
			name := strings.Trim(line[k[2]:k[3]], `"'`)
			if i := strings.LastIndex(name, "."); i >= 0 {
				name = name[i+1:]
			}
			value := line[k[1]:]
			if inSecrets || holdsSecrets(name) || secretName(name) {
				// A multi-line string goes on to its closing quotes.
				for _, q := range []string{`"""`, `'''`} {
					if strings.Count(value, q) == 1 {
						if end := strings.Index(rest, q); end >= 0 {
							// To the end of the line the quotes close on.
							le := strings.IndexByte(rest[end:], '\n')
							if le < 0 {
								value, rest, nl = value+"\n"+rest, "", false
							} else {
								value, rest = value+"\n"+rest[:end+le], rest[end+le+1:]
							}
						}
					}
				}
				value = tomlString.ReplaceAllStringFunc(value, func(s string) string {
					if isReference(strings.Trim(s, `"'`)) {
						return s
					}
					return `"` + mask + `"`
				})
			}
			out.WriteString(line[:k[1]] + value)
		} else {
			out.WriteString(line)
		}
		if nl {
			out.WriteByte('\n')
		}
		text = rest
	}
	return []byte(out.String())
}
