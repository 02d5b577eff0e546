package refstate

import (
	"strings"
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// FuzzParseMessage: any message is a state (a status without spaces or
// newlines, a holder without newlines) or an error, never a panic.
func FuzzParseMessage(f *testing.F) {
	f.Add(message("claimed", "dispatcher-1"))
	f.Add(contract.PaceMessagePrefix + `{"holder":"x","grants":[]}`)
	f.Add(contract.PaceMessagePrefix + `{}`)
	f.Add("mention-runner state: \n")
	f.Fuzz(func(t *testing.T, msg string) {
		status, holder, err := parseMessage(msg)
		if err != nil {
			return
		}
		if status == "" || strings.ContainsAny(status, " \n") || strings.Contains(holder, "\n") {
			t.Fatalf("parseMessage(%q) = %q, %q", msg, status, holder)
		}
	})
}
