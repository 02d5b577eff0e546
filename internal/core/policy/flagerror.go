package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrorKind says what is wrong with a `!cfg` word.
type ErrorKind string

const (
	UnknownFlag    ErrorKind = "unknown_flag"
	MalformedValue ErrorKind = "malformed_value"
	OutOfRange     ErrorKind = "out_of_range"
	BadRepo        ErrorKind = "bad_repo"
	EmptyCfg       ErrorKind = "empty"
	StrayCfg       ErrorKind = "stray_cfg"
)

// FlagError is a `!cfg` the run must not start with. Word is the offending
// word as the user typed it ("" for an empty !cfg).
type FlagError struct {
	Kind ErrorKind
	Word string
	Line int // for StrayCfg: the line of the comment it is on
}

// maxShownWord keeps a pasted essay from flooding the bot's reply.
const maxShownWord = 80

// Error names the word, says what is wrong and lists the valid flags.
func (e *FlagError) Error() string {
	return e.problem() + "; valid flags: " + validFlagsList
}

func (e *FlagError) problem() string {
	w := shorten(e.Word)
	key, val, _ := strings.Cut(e.Word, "=")
	name := asciiLower(key)
	switch e.Kind {
	case EmptyCfg:
		return "empty !cfg: give at least one flag after !cfg, or leave !cfg out"
	case StrayCfg:
		return fmt.Sprintf("%q on line %d is not read as flags: !cfg works only right after the comment's first mention of the bot (\"@bot !cfg flag flag…\", flags on that line), written once with a plain '!'; rewrite the comment that way, or remove it", w, e.Line)
	case UnknownFlag:
		if s := suggest(name); s != "" {
			return fmt.Sprintf("unknown !cfg flag %q (did you mean %s?)", w, s)
		}
		return fmt.Sprintf("unknown !cfg flag %q", w)
	case MalformedValue:
		spec, _ := lookupFlag(name)
		switch spec.value {
		case noValue:
			return fmt.Sprintf("malformed !cfg flag %q: %s takes no value, write just %s", w, spec.name, spec.name)
		case repoValue:
			return fmt.Sprintf("malformed !cfg flag %q: %s needs a repository as owner/name, e.g. %s=octo-org/hello-world", w, spec.name, spec.name)
		default:
			return fmt.Sprintf("malformed !cfg flag %q: %s needs a whole number 0…%d without sign or leading zeros, e.g. %s=1", w, spec.name, MaxLimit, spec.name)
		}
	case OutOfRange:
		return fmt.Sprintf("!cfg flag %q is out of range: n must be 0…%d", w, MaxLimit)
	case BadRepo:
		return fmt.Sprintf("!cfg flag %q names an invalid repository %q: owner must be 1–39 letters, digits or single inner hyphens, name 1–100 letters, digits, '.', '_' or '-'", w, shorten(val))
	}
	return fmt.Sprintf("bad !cfg flag %q (%s)", w, e.Kind)
}

// shorten cuts s to maxShownWord bytes on a rune boundary.
func shorten(s string) string {
	if len(s) <= maxShownWord {
		return s
	}
	i := maxShownWord
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// suggest returns the closest flag usage within two edits, or "".
func suggest(name string) string {
	if name == "" || len(name) > 32 {
		return ""
	}
	best, bestD := "", 3
	for _, s := range flagSpecs {
		if d := editDistance(name, s.name); d < bestD {
			best, bestD = s.usage(), d
		}
	}
	return best
}

// editDistance is the Levenshtein distance over bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
