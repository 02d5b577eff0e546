package actionwiring

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

func TestEval(t *testing.T) {
	c := Context{
		"inputs":  map[string]string{"mode": "publish", "token": "bot", "control-token": "", "n": "3"},
		"secrets": map[string]string{"BOT_TOKEN": "s3cret"},
		"github":  map[string]string{"token": "wf"},
		"needs":   map[string]any{"assemble": map[string]any{"outputs": map[string]string{"ready": "true"}}},
	}
	cases := []struct {
		expr string
		want any
		err  string
	}{
		{"inputs.mode", "publish", ""},
		{"inputs['mode']", "publish", ""},
		{"inputs.MODE", "publish", ""}, // property names are case-insensitive
		{"inputs.missing", nil, ""},
		{"secrets.BOT_TOKEN", "s3cret", ""},
		{"needs.assemble.outputs.ready == 'true'", true, ""},
		{"inputs.mode == 'PUBLISH'", true, ""}, // strings compare case-insensitively
		{"inputs.mode != 'agent'", true, ""},
		{"inputs.n == 3", true, ""},
		{"!inputs.control-token", true, ""},
		{"inputs.control-token || 'fallback'", "fallback", ""},
		{"inputs.token || 'fallback'", "bot", ""},
		{"inputs.mode == 'assemble' && inputs.token || inputs.mode == 'publish' && inputs.control-token || ''", "", ""},
		{"(inputs.mode == 'fetch' || inputs.mode == 'publish') && inputs.token || ''", "bot", ""},
		{"inputs.x != '' && 'runs/p.md' || ''", "", ""}, // a missing property is null, and null == '' (both 0 as numbers)
		{"inputs.a != '' && 'runs/p.md' || ''", "", ""},
		{"inputs.mode != '' && 'runs/p.md' || ''", "runs/p.md", ""},
		{"'it''s'", "it's", ""},
		{"true && false", false, ""},
		{"null", nil, ""},
		{"-1.5", -1.5, ""},
		{"format('{0}', inputs.mode)", nil, "unsupported"},
		{"inputs.n > 2", nil, "unsupported"},
		{"inputs[0]", nil, "unsupported"},
		{"steps.run.outputs.x", nil, `unknown context "steps"`},
		{"inputs.mode ==", nil, "missing operand"},
		{"(inputs.mode", nil, "missing )"},
		{"'open", nil, "unterminated string"},
		{"inputs.mode inputs.token", nil, "unexpected"},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			got, err := Eval(tc.expr, c)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				if tc.err == "unsupported" {
					assert.True(t, errors.Is(err, ErrUnsupported))
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestInterpolate(t *testing.T) {
	c := Context{"inputs": map[string]string{"a": "x", "b": "}}"}}
	cases := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${{ inputs.a }}", "x", ""},
		{"pre-${{ inputs.a }}-${{inputs.b}}-post", "pre-x-}}-post", ""},
		{"${{ inputs.a == '}}' }}", "false", ""},
		{"${{ inputs.a", "", "without }}"},
	}
	for _, tc := range cases {
		got, err := Interpolate(tc.in, c)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func FuzzEval(f *testing.F) {
	for _, s := range []string{"inputs.mode == 'x' && inputs.t || ''", "!(a.b)", "'it''s'", "inputs['x']", "-1.5 != null", "f(1)"} {
		f.Add(s)
	}
	c := Context{"inputs": map[string]string{"mode": "x", "t": "y"}, "a": map[string]any{"b": true}}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Eval(s, c)
		if err == nil {
			_ = String(v) // every value converts
		}
		_, _ = Interpolate("${{ "+s+" }}", c)
	})
}

// The tokens each stage's runner gets, as agent-run.yml and action.yml
// wire them: the workflow token only where the control repo is written
// (assemble, publish), the bot's token only where a target is read or
// written (fetch, publish), nothing in the agent job. assemble and fetch
// are two steps of the prepare job: that job holds both tokens, each in
// its own step, and runs no agent code.
func TestStageTokens(t *testing.T) {
	w, err := Load("../../..")
	require.NoError(t, err)
	call := Call{
		With:    map[string]string{"bot-login": "bot", "runner-ref": "v0.1.0"},
		Secrets: map[string]string{"BOT_TOKEN": "bot-secret", "ANTHROPIC_API_KEY": "model-key"},
		GitHub:  map[string]string{"token": "workflow-token"},
		Needs: map[string]map[string]string{"prepare": {"ready": "true", "jobid": "j", "context_sha256": "abc", "log_issue": "7"},
			"agent": {}},
		Steps: map[string]map[string]string{"assemble": {"ready": "true", "jobid": "j", "context_sha256": "abc"}},
	}
	cases := []struct {
		stage, job string
		tokens     []string
	}{
		{"assemble", "prepare", []string{"GITHUB_TOKEN=workflow-token"}},
		{"fetch", "prepare", []string{"BOT_TOKEN=bot-secret"}},
		{"agent", "agent", nil},
		{"publish", "publish", []string{"BOT_TOKEN=bot-secret", "GITHUB_TOKEN=workflow-token"}},
	}
	for _, tc := range cases {
		job, err := w.JobOf(tc.stage)
		require.NoError(t, err, tc.stage)
		assert.Equal(t, tc.job, job, "stage %s runs in job %s", tc.stage, tc.job)
		env, err := w.StageEnv(tc.stage, call)
		require.NoError(t, err, tc.stage)
		assert.Equal(t, tc.tokens, Tokens(env), "tokens of stage %s", tc.stage)
		assert.Equal(t, tc.stage, env["MODE"], "stage %s runs runner %s", tc.stage, tc.stage)
	}
	env, err := w.StageEnv("fetch", call)
	require.NoError(t, err)
	assert.Equal(t, "abc", env["MR_CONTEXT_SHA256"], "fetch checks the context assemble wrote, in the same job")
	perms := map[string]map[string]string{
		"prepare": {"contents": "write", "issues": "write"},
		"agent":   {},
		"publish": {"contents": "write", "issues": "write"},
	}
	for job, want := range perms {
		p, err := w.Permissions(job)
		require.NoError(t, err)
		assert.Equal(t, want, p, "permissions of job %s (internal/testrig/e2e checks they are the ones it uses)", job)
	}
	env, err = w.StageEnv("agent", call)
	require.NoError(t, err)
	for k, v := range env {
		assert.NotContains(t, v, "secret", "agent job env %s", k)
		assert.NotContains(t, v, "workflow-token", "agent job env %s", k)
	}
}

// TestThreeJobs: a mention runs three jobs (prepare, agent, publish); the
// trusted stages before the agent share one runner start.
func TestThreeJobs(t *testing.T) {
	w, err := Load("../../..")
	require.NoError(t, err)
	assert.Equal(t, []string{"agent", "prepare", "publish"}, w.Jobs())
}

func TestStageEnvErrors(t *testing.T) {
	w, err := Load("../../..")
	require.NoError(t, err)
	_, err = w.StageEnv("nope", Call{})
	assert.ErrorContains(t, err, "in mode nope in 0 steps")
	_, err = w.StageEnv("publish", Call{With: map[string]string{"bot-login": "bot"}})
	assert.ErrorContains(t, err, "lacks required input runner-ref")
	_, err = Load(t.TempDir())
	assert.Error(t, err)
}

// TestAgentJobHoldsOnlyTheSelectedKey: whatever secrets the caller passes,
// the agent job's steps are handed the key of the run's engine and no
// other secret: every env:, with: and run: of the job, evaluated for each
// engine.
func TestAgentJobHoldsOnlyTheSelectedKey(t *testing.T) {
	w, err := Load("../../..")
	require.NoError(t, err)
	secrets := map[string]string{"BOT_TOKEN": "secret-bot-token"}
	for _, k := range contract.ModelKeys() {
		secrets[k] = "secret-key-" + k
	}
	for _, eng := range []string{"claude", "codex", "gemini", "replay"} {
		t.Run(eng, func(t *testing.T) {
			call := Call{
				With:    map[string]string{"bot-login": "bot", "runner-ref": "v0.1.0", "engine": eng},
				Secrets: secrets,
				GitHub:  map[string]string{"token": "workflow-token", "run_id": "1", "run_attempt": "1"},
				Needs:   map[string]map[string]string{"prepare": {"ready": "true", "jobid": "j", "context_sha256": "abc", "log_issue": "7"}},
			}
			vals, err := w.JobValues("agent", call)
			require.NoError(t, err)
			want := contract.EngineModelKeys[eng]
			held := map[string]string{}
			for where, v := range vals {
				for name, secret := range secrets {
					if strings.Contains(v, secret) {
						held[name] = where
					}
				}
				assert.NotContains(t, v, "workflow-token", where)
			}
			if want == "" {
				assert.Empty(t, held, "engine %s gets no secret", eng)
				return
			}
			require.Len(t, held, 1, "engine %s: secrets held %v", eng, held)
			assert.Contains(t, held, want, "engine %s gets its own key", eng)
			assert.Regexp(t, `^step \d+ env `+want+`$`, held[want], "in the variable the engine reads")
		})
	}
}

// TestArtifactsSurviveReruns: every artifact a job that can run again
// uploads either replaces the last one (overwrite) or has a name of its
// own per attempt, and publish downloads the record the agent job's last
// attempt uploaded (its record output), even when publish alone runs again.
func TestArtifactsSurviveReruns(t *testing.T) {
	w, err := Load("../../..")
	require.NoError(t, err)
	call := func(attempt, agentAttempt string) Call {
		c := Call{
			With:   map[string]string{"bot-login": "bot", "runner-ref": "v0.1.0"},
			GitHub: map[string]string{"token": "t", "run_id": "9", "run_attempt": attempt},
			Needs:  map[string]map[string]string{"prepare": {"ready": "true", "jobid": "j"}},
			Steps:  map[string]map[string]string{"assemble": {"ready": "true", "jobid": "j"}},
		}
		outs, err := w.JobOutputs("agent", Call{With: c.With, GitHub: map[string]string{"run_attempt": agentAttempt}, Needs: c.Needs})
		require.NoError(t, err)
		c.Needs["agent"] = outs
		return c
	}
	for _, job := range w.Jobs() {
		names := map[string]bool{}
		for _, attempt := range []string{"1", "2"} {
			ts, err := w.Artifacts(job, call(attempt, attempt))
			require.NoError(t, err)
			for _, tr := range ts {
				if tr.Upload && !tr.Overwrite {
					assert.False(t, names[tr.Name], "job %s uploads %s in attempts 1 and 2 without overwrite: GitHub answers 409 on a re-run", job, tr.Name)
					names[tr.Name] = true
				}
			}
		}
	}
	up := func(job string, c Call) string {
		ts, err := w.Artifacts(job, c)
		require.NoError(t, err)
		for _, tr := range ts {
			if tr.Upload {
				return tr.Name
			}
		}
		return ""
	}
	down := func(c Call) []string {
		ts, err := w.Artifacts("publish", c)
		require.NoError(t, err)
		var out []string
		for _, tr := range ts {
			if !tr.Upload {
				out = append(out, tr.Name)
			}
		}
		return out
	}
	// agent and publish re-run together (the agent failed), or publish
	// alone (the agent's record is from attempt 1)
	for _, tc := range []struct{ attempt, agentAttempt string }{{"1", "1"}, {"2", "2"}, {"2", "1"}} {
		c := call(tc.attempt, tc.agentAttempt)
		agentUp := up("agent", call(tc.agentAttempt, tc.agentAttempt))
		assert.Contains(t, down(c), agentUp, "publish in attempt %s reads the record of the agent's attempt %s", tc.attempt, tc.agentAttempt)
	}
}
