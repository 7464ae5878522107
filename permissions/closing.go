package permissions

import "strings"

// closing is the index of the ')' that closes the '(' at open, or
// len(rs), read as bash 5.2 reads a $(…): by parsing its commands. A ( or
// ) quoted, escaped, inside a backtick substitution, a comment or a
// heredoc's body is text, and a case pattern's ) closes the pattern, so
// bash reads $(echo ")"; git push), $(cat <<E⏎)⏎E⏎git push) and $(case x
// in x) git push;; esac) to their last ).
func closing(rs []rune, open int) int {
	depth := 0
	start := false  // j begins a word, so a # there a comment
	cmdPos := false // j begins a word where a command begins, so case and esac are reserved words
	var cases []int // the depth of each case open, at which a ) ends a pattern
	var bodies []heredocWanted
	for j := open; j < len(rs); j++ {
		c := rs[j]
		word := false // j is a word's character, ending command position
		switch c {
		case '#':
			for start && j+1 < len(rs) && rs[j+1] != '\n' {
				j++
			}
		case '\n':
			if len(bodies) > 0 {
				j = skipBodies(rs, j, bodies)
				bodies = bodies[:0]
			}
		case '\\':
			j++
			word = true
		case '$':
			if j+1 < len(rs) && rs[j+1] == '\'' { // $'…' may hold \'
				j = ansiEnd(rs, j+2)
			}
			word = true
		case '\'':
			j = quoteEnd(rs, j+1, '\'')
			word = true
		case '"':
			j = dquoteEnd(rs, j+1)
			word = true
		case '`':
			j = backtickEnd(rs, j+1)
			word = true
		case '<':
			if strings.HasPrefix(string(rs[j:min(j+3, len(rs))]), "<<<") {
				j += 2
			} else if j+1 < len(rs) && rs[j+1] == '<' {
				strip, delim, _, k := heredocDelim(rs, j)
				if delim != "" {
					bodies = append(bodies, heredocWanted{delim, strip})
				}
				j = k - 1
			}
		case '(':
			depth++
		case ')':
			if n := len(cases); n > 0 && cases[n-1] == depth {
				break // a case pattern's
			}
			depth--
			if depth == 0 {
				return j
			}
		default:
			if !strings.ContainsRune(" \t;&|<>", c) {
				word = true
				if cmdPos {
					k := j
					for k < len(rs) && !strings.ContainsRune(" \t\n;&|()<>'\"`\\$", rs[k]) {
						k++
					}
					switch string(rs[j:k]) {
					case "case":
						cases = append(cases, depth)
					case "esac":
						if n := len(cases); n > 0 && cases[n-1] == depth {
							cases = cases[:n-1]
						}
					}
					if keepsCmdPos[string(rs[j:k])] {
						j = k - 1
						start = false
						continue // the next word begins a command too
					}
					j = k - 1
				}
			}
		}
		start = strings.ContainsRune(" \t\n;&|()<>", c)
		if word {
			cmdPos = false
		} else if strings.ContainsRune("\n;&|()", c) {
			cmdPos = true
		}
	}
	return len(rs)
}

// keepsCmdPos are the reserved words after which a command begins.
var keepsCmdPos = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true,
	"until": true, "!": true, "{": true, "time": true}

// heredocWanted is a heredoc whose body begins at the next newline.
type heredocWanted struct {
	delim string
	strip bool // <<-: the body's leading tabs are dropped
}

// skipBodies is the index of the newline that ends the last of the
// bodies that begin after the newline at nl, or len(rs).
func skipBodies(rs []rune, nl int, bodies []heredocWanted) int {
	k := nl + 1
	for _, b := range bodies {
		for k < len(rs) {
			e := k
			for e < len(rs) && rs[e] != '\n' {
				e++
			}
			line := string(rs[k:e])
			if b.strip {
				line = strings.TrimLeft(line, "\t")
			}
			k = e + 1
			if line == b.delim {
				break
			}
		}
	}
	return min(k-1, len(rs))
}
