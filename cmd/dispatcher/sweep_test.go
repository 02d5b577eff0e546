package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

// TestClaimSweepWiring: the dispatcher as the command builds it sweeps old
// claim refs in one push, written by CONTROL_TOKEN's account (or the
// bot's when it is unset), whatever the number of claims.
func TestClaimSweepWiring(t *testing.T) {
	for _, tc := range []struct {
		name         string
		controlToken string
		writer       string // the account the sweep's write is counted to
		old          int
	}{
		{"CONTROL_TOKEN of its own", "ctl-tok", "ops", 5},
		{"the bot's token", "", "mrbot", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, base := simfixture.Start(t, githubsim.Options{Logf: t.Logf})
			for _, u := range []string{"mrbot", "ops"} {
				sim.AddUser(u)
			}
			_, err := sim.AddRepo("ops/control", false)
			require.NoError(t, err)
			sim.SetPermission("ops/control", "mrbot", "write")
			sim.AddToken("tok", "mrbot")
			sim.AddToken("ctl-tok", "ops")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			// claims older than the age kept, and one recent
			seed := sim.Client("tok")
			mk := func(name string, at time.Time) {
				sig := &github.CommitAuthor{Name: github.String("mention-runner"), Email: github.String("mention-runner@users.noreply.github.com"), Date: &github.Timestamp{Time: at}}
				c, _, err := seed.Git.CreateCommit(ctx, "ops", "control", &github.Commit{Message: github.String("mention-runner state: dispatched\n\nholder: " + name + "\n"),
					Tree: &github.Tree{SHA: github.String(refstate.EmptyTree)}, Author: sig, Committer: sig}, nil)
				require.NoError(t, err)
				_, _, err = seed.Git.CreateRef(ctx, "ops", "control", &github.Reference{Ref: github.String(dispatch.RefPrefix + name), Object: &github.GitObject{SHA: c.SHA}})
				require.NoError(t, err)
			}
			for i := range tc.old {
				mk(fmt.Sprintf("old-%d", i), time.Now().Add(-dispatch.DefaultStateMaxAge-time.Hour))
			}
			mk("recent", time.Now())

			vars := map[string]string{"BOT_LOGIN": "mrbot", "BOT_TOKEN": "tok", "CONTROL_REPO": "ops/control", "ALLOWED_USERS": "alice", "GITHUB_API_URL": base, "WRITE_GAP": "0s"}
			if tc.controlToken != "" {
				vars["CONTROL_TOKEN"] = tc.controlToken
			}
			c, err := resolveWith(t, vars)
			require.NoError(t, err)
			env := &cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return vars[k] }}
			d, _, err := c.build(env, false)
			require.NoError(t, err)

			sim.ResetRequests()
			res, err := d.SweepClaims(ctx)
			require.NoError(t, err)
			assert.Empty(t, res.Errors)
			assert.Len(t, res.Deleted, tc.old)
			assert.Equal(t, []string{dispatch.RefPrefix + "recent"}, sim.Refs("ops/control", dispatch.RefPrefix))
			var deletes []string // the sweep's deleting requests, by whom
			ledger := 0          // the account's write-ledger writes (a grant for the push: pushed too)
			for _, r := range sim.Requests() {
				switch {
				case strings.HasSuffix(r.Path, "/git-receive-pack") && strings.Contains(string(r.ReqBody), "refs/mention-runner/pace/"):
					ledger++
				case strings.HasSuffix(r.Path, "/git-receive-pack") || r.Method == "DELETE":
					deletes = append(deletes, r.Method+" "+r.Login)
				case r.Method != "GET" && strings.Contains(r.Path, "/git/"):
					ledger++
				}
			}
			assert.Equal(t, []string{"POST " + tc.writer}, deletes, "one push, with the token that writes CONTROL")
			if tc.controlToken == "" {
				assert.Positive(t, ledger, "the bot's push takes a slot of its write ledger, as its other writes do")
			}
		})
	}
}
