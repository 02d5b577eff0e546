package transport

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
)

func TestJobNamespaceIsDocumentedDerivation(t *testing.T) {
	want := uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/mention-runner/mention-runner/jobid"))
	assert.Equal(t, want, JobNamespace)
}

func TestJobID(t *testing.T) {
	cases := []struct{ node, want string }{
		// Pinned: a change here re-keys every job in flight.
		{"IC_kwDOABCDEF5xyz", "1bf1a9c3-5cca-585c-ad8b-79aeee1815a8"},
		{"", uuid.NewSHA1(JobNamespace, nil).String()},
	}
	for _, c := range cases {
		got := JobID(c.node)
		assert.Equal(t, c.want, got)
		u, err := uuid.Parse(got)
		assert.NoError(t, err)
		assert.Equal(t, uuid.Version(5), u.Version())
		assert.Equal(t, u.String(), got, "canonical lowercase form")
	}
	assert.NotEqual(t, JobID("IC_a"), JobID("IC_b"))
	assert.Equal(t, JobID("IC_a"), JobID("IC_a"))
}
