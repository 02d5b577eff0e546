package outputs

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
)

func TestQueueAppendAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), contract.OutputsFile)
	q, err := OpenQueue(path)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := q.Append(Entry{Kind: policy.KindComment, Repo: "a/b", Number: 1, Body: "hi"})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	es, err := ReadFile(path)
	require.NoError(t, err)
	require.Len(t, es, 20)
	for i, e := range es {
		assert.Equal(t, i, e.Index)
	}
	// a reopened queue continues the numbering
	q2, err := OpenQueue(path)
	require.NoError(t, err)
	e, err := q2.Append(Entry{Kind: KindNoop, Reason: "nothing to do"})
	require.NoError(t, err)
	assert.Equal(t, 20, e.Index)
	_, ok := e.Action()
	assert.False(t, ok, "noop asks for no action")
	a, ok := es[0].Action()
	assert.True(t, ok)
	assert.Equal(t, policy.Action{Kind: policy.KindComment, Repo: "a/b", Number: 1}, a)
}

func TestReadRefusesTampering(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"gap", `{"index":0,"kind":"comment","repo":"a/b","body":"x","at":"2026-01-01T00:00:00Z"}` + "\n" + `{"index":2,"kind":"comment","repo":"a/b","body":"x","at":"2026-01-01T00:00:00Z"}` + "\n", "index 2, want 1"},
		{"torn", `{"index":0,"kind":"comment"`, "torn"},
		{"unknown field", `{"index":0,"kind":"comment","allowed":true,"body":"","repo":"a/b","at":"2026-01-01T00:00:00Z"}` + "\n", "unknown field"},
		{"not json", "nope\n", "line 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in))
			assert.ErrorContains(t, err, c.want)
		})
	}
	es, err := Read(strings.NewReader("\n\n"))
	require.NoError(t, err)
	assert.Empty(t, es)
	_, err = ReadFile(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
