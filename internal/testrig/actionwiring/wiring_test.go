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

// The tokens each job's runner gets, as agent-run.yml and action.yml wire
// them: the workflow token only where the control repo is written
// (assemble, publish), the bot's token only where a target is read or
// written (fetch, publish), nothing in the agent job.
func TestStageTokens(t *testing.T) {
	w, err := Load("../../..")
	require.NoError(t, err)
	call := Call{
		With:    map[string]string{"bot-login": "bot", "runner-ref": "v0.1.0"},
		Secrets: map[string]string{"BOT_TOKEN": "bot-secret", "ANTHROPIC_API_KEY": "model-key"},
		GitHub:  map[string]string{"token": "workflow-token"},
		Needs: map[string]map[string]string{"assemble": {"ready": "true", "jobid": "j", "context_sha256": "abc", "log_issue": "7"},
			"fetch": {}, "agent": {}},
	}
	want := map[string][]string{
		"assemble": {"GITHUB_TOKEN=workflow-token"},
		"fetch":    {"BOT_TOKEN=bot-secret"},
		"agent":    nil,
		"publish":  {"BOT_TOKEN=bot-secret", "GITHUB_TOKEN=workflow-token"},
	}
	perms := map[string]map[string]string{
		"assemble": {"contents": "write", "issues": "write"},
		"fetch":    {},
		"agent":    {},
		"publish":  {"contents": "write", "issues": "write"},
	}
	for job, tokens := range want {
		env, err := w.StageEnv(job, call)
		require.NoError(t, err, job)
		assert.Equal(t, tokens, Tokens(env), "tokens of job %s", job)
		assert.Equal(t, job, env["MODE"], "job %s runs runner %s", job, job)
		p, err := w.Permissions(job)
		require.NoError(t, err)
		assert.Equal(t, perms[job], p, "permissions of job %s (internal/testrig/e2e checks they are the ones it uses)", job)
	}
	env, err := w.StageEnv("agent", call)
	require.NoError(t, err)
	for k, v := range env {
		assert.NotContains(t, v, "secret", "agent job env %s", k)
		assert.NotContains(t, v, "workflow-token", "agent job env %s", k)
	}
}

func TestStageEnvErrors(t *testing.T) {
	w, err := Load("../../..")
	require.NoError(t, err)
	_, err = w.StageEnv("nope", Call{})
	assert.ErrorContains(t, err, `no job "nope"`)
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
				Needs:   map[string]map[string]string{"assemble": {"ready": "true", "jobid": "j", "context_sha256": "abc", "log_issue": "7"}, "fetch": {}},
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
