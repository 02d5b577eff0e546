package redact

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// MinSecretLen is the shortest value AddSecret takes: shorter ones would
// redact ordinary words.
const MinSecretLen = 8

var (
	secretsMu sync.Mutex // serialises AddSecret
	// secrets holds every form of every registered value, longest first.
	// A new slice replaces it on each change (never edited in place), so
	// String reads it with one atomic load instead of a lock per call.
	secrets atomic.Pointer[[]string]
	seen    = map[string]bool{}
)

// AddSecret makes String redact value wherever it appears: raw, percent-
// encoded (query and path forms) and base64-encoded (standard and URL
// alphabets, at each of the three alignments a value can have inside a
// longer encoded text, as in HTTP basic auth). Values shorter than
// MinSecretLen are ignored.
func AddSecret(value string) {
	value = strings.TrimSpace(value)
	if len(value) < MinSecretLen {
		return
	}
	forms := []string{value, url.QueryEscape(value), url.PathEscape(value)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := 0; k < 3; k++ {
			// Encode behind k filler bytes and keep the characters that
			// depend on the value alone.
			e := enc.WithPadding(base64.NoPadding).EncodeToString(append(make([]byte, k), value...))
			start, end := (k*8+5)/6, (k+len(value))*8/6
			if end-start >= MinSecretLen {
				forms = append(forms, e[start:end])
			}
		}
	}
	secretsMu.Lock()
	defer secretsMu.Unlock()
	next := slices.Clone(registered())
	for _, f := range forms {
		if !seen[f] {
			seen[f] = true
			next = append(next, f)
		}
	}
	sort.Slice(next, func(i, j int) bool { return len(next[i]) > len(next[j]) })
	secrets.Store(&next)
}

func registered() []string {
	if p := secrets.Load(); p != nil {
		return *p
	}
	return nil
}

// secretName matches environment variable names that hold secrets.
var secretName = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_?KEY|_KEY$|^KEY$|_PAT$|AUTH)`)

// secretWhere matches names whose value says where a secret is (a file
// path, as BOT_TOKEN_FILE), not the secret: redacting it would only hide
// the path from the person who has to fix it.
var secretWhere = regexp.MustCompile(`(?i)_(FILE|PATH)$`)

// AddSecretsFromEnv registers the value of every variable in environ
// ("NAME=value", as os.Environ returns) whose name says it holds a secret
// (…TOKEN, …SECRET, …API_KEY, …PASSWORD, INPUT_… forms of action inputs
// included; not …_FILE or …_PATH, which say where one is). It returns the
// names it registered, for the run record.
func AddSecretsFromEnv(environ []string) []string {
	var names []string
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !secretName.MatchString(name) || secretWhere.MatchString(name) || len(strings.TrimSpace(val)) < MinSecretLen {
			continue
		}
		AddSecret(val)
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
