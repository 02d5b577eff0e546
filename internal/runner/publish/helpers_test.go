package publish

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mention-runner/mention-runner/internal/runner/job"
	"github.com/stretchr/testify/require"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func owner2(repo string) string { o, _ := splitRepo(repo); return o }
func name2(repo string) string  { _, n := splitRepo(repo); return n }

func mustJobID(t *testing.T, ctx []byte) string {
	t.Helper()
	j, err := job.FromContext(ctx, testBot)
	require.NoError(t, err)
	return j.JobID
}

func itoa(n int) string { return strconv.Itoa(n) }
