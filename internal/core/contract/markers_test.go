package contract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseOutputMarker(t *testing.T) {
	cases := []struct {
		name, body string
		job        string
		idx        int
		ok         bool
	}{
		{"round trip", "hi\n" + OutputMarker("job-1", 0), "job-1", 0, true},
		{"last one wins", OutputMarker("fake", 9) + "\n" + OutputMarker("real", 2), "real", 2, true},
		{"none", "no marker here", "", 0, false},
		{"leading zero", "<!-- mention-runner:job=j;output=01 -->", "", 0, false},
		{"negative", "<!-- mention-runner:job=j;output=-1 -->", "", 0, false},
		{"extra space", "<!--  mention-runner:job=j;output=1 -->", "", 0, false},
		{"bad job chars", "<!-- mention-runner:job=a b;output=1 -->", "", 0, false},
		{"uuid", OutputMarker("6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11", 12), "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11", 12, true},
		{"log issue", LogIssueMarker("6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11"), "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11" + LogSuffix, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job, idx, ok := ParseOutputMarker(c.body)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.job, job)
			assert.Equal(t, c.idx, idx)
		})
	}
}

// Every marker form mention-runner writes is caught by HasMarker, so the
// gate and publish refuse agent text that carries one.
func TestHasMarker(t *testing.T) {
	job := "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11"
	cases := []struct {
		name string
		s    string
		want bool
	}{
		{"output marker", "hi " + OutputMarker(job, 3), true},
		{"log-issue marker", LogIssueMarker(job), true},
		{"reply marker", ReplyMarker(ReplyCfg, 12, "IC_1"), true},
		{"part break", PartBreak, true},
		{"upper case", "<!-- MENTION-RUNNER:job=x;output=0 -->", true},
		{"spaced", "<!-- mention - runner : log job=x -->", true},
		{"underscore", "mention_runner:job=x", true},
		{"no separator", "mentionrunner:x", true},
		{"equals", "mention-runner=job", true},
		{"zero-width split", "mention-\u200brunner:job=x", true},
		{"soft hyphen split", "men\u00adtion-runner:job=x", true},
		{"plain prose", "the mention-runner project runs agents", false},
		{"empty", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, HasMarker(c.s))
		})
	}
}

func TestReplyMarker(t *testing.T) {
	assert.Equal(t, "<!-- mention-runner:reply kind=cfg comment=12 node=IC_1 -->", ReplyMarker(ReplyCfg, 12, "IC_1"))
}

func FuzzParseOutputMarker(f *testing.F) {
	f.Add(OutputMarker("job", 1))
	f.Add("<!-- mention-runner:job=x;output=99999999999 -->")
	f.Add("text <!-- mention-runner:job=;output=1 -->")
	f.Fuzz(func(t *testing.T, body string) {
		job, idx, ok := ParseOutputMarker(body)
		if !ok {
			return
		}
		// whatever parses renders back to a marker that parses the same
		j2, i2, ok2 := ParseOutputMarker(OutputMarker(job, idx))
		require.True(t, ok2)
		assert.Equal(t, job, j2)
		assert.Equal(t, idx, i2)
		assert.GreaterOrEqual(t, idx, 0)
		// and anything that parses is caught as a marker
		assert.True(t, HasMarker(body))
	})
}
