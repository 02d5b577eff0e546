package publish

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/record"
)

// FuzzRecheck feeds arbitrary outputs.jsonl through the strict reader and
// the re-check: nothing panics, every entry is accounted for, and nothing
// carrying a marker or breaking the policy is let through.
func FuzzRecheck(f *testing.F) {
	f.Add([]byte(`{"index":0,"kind":"comment","repo":"acme/widgets","number":7,"body":"hi","at":"2025-01-01T00:00:00Z"}` + "\n"))
	f.Add([]byte(`{"index":0,"kind":"issue","repo":"acme/widgets","title":"t","body":"<!-- mention-runner:job=a;output=0 -->","at":"2025-01-01T00:00:00Z"}` + "\n"))
	f.Add([]byte(`{"index":0,"kind":"pull_request","repo":"acme/widgets","title":"t","bundle":"../x","at":"2025-01-01T00:00:00Z"}` + "\n"))
	f.Add([]byte(`{"index":0,"kind":"noop","repo":"","body":"","reason":"none","at":"2025-01-01T00:00:00Z"}` + "\n" + `{"index":1,"kind":"comm`))
	f.Add([]byte(`{"index":1,"kind":"comment","repo":"acme/widgets","number":7,"body":"skip","at":"2025-01-01T00:00:00Z"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, readErr := outputs.Read(bytes.NewReader(data))
		flags, _ := policy.ParseFlags([]string{"comment-limit=2", "deny=acme/secret"})
		p := policy.Effective(flags, policy.DefaultCeilings(), policy.Thread{Repo: "acme/widgets", Number: 7}, blocked{"gone/away": true})
		plan := Recheck(entries, readErr, nil, p)
		n := len(plan.Writes) + len(plan.Noops) + len(plan.Refused)
		if readErr != nil {
			if len(plan.Writes) != 0 || n != len(entries)+1 {
				t.Fatalf("unreadable file: %d writes, %d accounted for %d entries", len(plan.Writes), n, len(entries))
			}
			return
		}
		if n != len(entries) {
			t.Fatalf("%d entries, %d accounted for", len(entries), n)
		}
		perThread := map[string]int{}
		for _, e := range plan.Writes {
			if strings.Contains(strings.ToLower(e.Body+e.Title), "mention-runner:job=") {
				t.Fatalf("marker let through: %+v", e)
			}
			if strings.EqualFold(e.Repo, "acme/secret") || strings.EqualFold(e.Repo, "gone/away") {
				t.Fatalf("denied repo let through: %+v", e)
			}
			if e.Kind == policy.KindComment {
				k := strings.ToLower(e.Repo) + "#" + string(rune(e.Number))
				if perThread[k]++; perThread[k] > 2 {
					t.Fatalf("comment limit passed on %s", e.Repo)
				}
			}
		}
	})
}

// FuzzOutcomeJSON: any outcome.json yields a report, never a panic, and
// never a success unless the strict schema reads "completed" with no
// failure.
func FuzzOutcomeJSON(f *testing.F) {
	f.Add([]byte(`{"status":"completed"}`))
	f.Add([]byte(`{"status":"failed","failure":"loop-detected","loop":{"tool":"Read","arguments":"{}","count":6}}`))
	f.Add([]byte(`{"status":"completed","failure":"","num_turns":3}`))
	f.Add([]byte(`{"status":"COMPLETED"}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, contract.OutcomeFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		a := LoadAgentRun(dir)
		if a.Cause == "" {
			o, err := record.ReadOutcome(dir)
			if err != nil || o.Status != contract.StatusCompleted || o.Failure != "" {
				t.Fatalf("success from %q", data)
			}
		}
	})
}
