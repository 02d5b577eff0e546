package assemble

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/runner/config"
	"github.com/mention-runner/mention-runner/internal/runner/job"
	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

func goldenRun(t *testing.T) *run {
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"BOT_LOGIN": bot, "CONTROL_REPO": control}[k]
	})
	require.NoError(t, err)
	return &run{cfg: cfg, runURL: "https://github.com/acme/control/actions/runs/77"}
}

func TestGoldenLogIssueBody(t *testing.T) {
	r := goldenRun(t)
	j, err := job.FromContext(contextFor("IC_golden", 10), bot)
	require.NoError(t, err)
	golden.CheckString(t, filepath.Join("testdata", "log-issue-running.md"), logIssueBody(r.report(j, "running"), j.JobID))
}

func TestGoldenFailureBodies(t *testing.T) {
	r := goldenRun(t)
	jobID := transport.JobID("IC_golden")
	invalid := &transport.Error{Kind: transport.KindInvalidBase64, JobID: jobID, Index: 1, Msg: "context_b64 has ``` in it"}
	golden.CheckString(t, filepath.Join("testdata", "log-issue-invalid.md"), failureBody(r.report(nil, "failed"), errorSection(invalid), jobID))
	other := errors.New("create blob: 403 Resource not accessible by integration (token ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789)")
	golden.CheckString(t, filepath.Join("testdata", "log-issue-unknown-job.md"), failureBody(r.report(nil, "failed"), errorSection(other), ""))
}
