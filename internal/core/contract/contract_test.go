package contract

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRefs(t *testing.T) {
	j := "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11"
	assert.Equal(t, "refs/mention-runner/jobs/"+j+"/shards/3", ShardRef(j, 3))
	assert.Equal(t, "refs/mention-runner/jobs/"+j+"/lock", LockRef(j))
	assert.Equal(t, "refs/mention-runner/pace/bot", PaceGenRef("Bot", 0))
	assert.Equal(t, "refs/mention-runner/pace/bot.12", PaceGenRef("bot", 12))
	for ref, want := range map[string]int{"refs/mention-runner/pace/bot": 0, "refs/mention-runner/pace/bot.7": 7, "refs/mention-runner/pace/bot.12": 12} {
		gen, ok := PaceGen("bot", ref)
		assert.True(t, ok, ref)
		assert.Equal(t, want, gen, ref)
	}
	for _, ref := range []string{"refs/mention-runner/pace/bot-2", "refs/mention-runner/pace/bot.", "refs/mention-runner/pace/bot.01", "refs/mention-runner/pace/bot.x", "refs/mention-runner/pace/bot.-1", "refs/mention-runner/pace/bo", "refs/mention-runner/pace/bot.99999999999999999999"} {
		_, ok := PaceGen("bot", ref)
		assert.False(t, ok, ref)
	}
	assert.Equal(t, "refs/mention-runner/dispatched/"+j, DispatchedRef(j))
	for _, prefix := range []string{JobRefPrefix, DispatchedRefPrefix, RunStateRefPrefix, DoctorRefPrefix, PaceRefPrefix} {
		assert.False(t, strings.HasPrefix(SweepMarkerRef, prefix), "no sweep of %s takes the sweep marker", prefix)
	}
	at := time.Date(2026, 11, 23, 7, 59, 59, 0, time.UTC)
	assert.Equal(t, 498727, PaceWindowGen(at))
	assert.Equal(t, 498728, PaceWindowGen(at.Add(time.Second)), "the next hour, the next name")
	assert.Equal(t, 1, PaceWindowGen(time.Unix(-7200, 0)), "never an invalid name")
	gen, ok := PaceGen("bot", PaceGenRef("bot", PaceWindowGen(at)))
	assert.True(t, ok)
	assert.Equal(t, 498727, gen)
}

func TestJobID(t *testing.T) {
	j := "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11"
	cases := []struct {
		in        string
		canonical string // "" = not a UUID at all
	}{
		{j, j},
		{"6F1C1A53-2B1E-5D4F-9A57-0C0A4E0B8D11", j},
		{"6f1c1a532b1e5d4f9a570c0a4e0b8d11", j},
		{"{6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11}", j},
		{"urn:uuid:6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11", j},
		{"", ""},
		{"../../etc", ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseJobID(c.in)
			if c.canonical == "" {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
				assert.Equal(t, c.canonical, got)
			}
			// only the canonical spelling is accepted between jobs
			assert.Equal(t, c.canonical != "" && c.in == c.canonical, ValidJobID(c.in))
		})
	}
}

func FuzzCheckJobID(f *testing.F) {
	f.Add("6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11")
	f.Add("x")
	f.Fuzz(func(t *testing.T, s string) {
		if CheckJobID(s) != nil {
			return
		}
		// a valid jobid is its own canonical form and safe in a marker
		c, err := ParseJobID(s)
		assert.NoError(t, err)
		assert.Equal(t, s, c)
		_, _, ok := ParseOutputMarker(OutputMarker(s, 0))
		assert.True(t, ok)
	})
}

func TestWorkflowRunURL(t *testing.T) {
	assert.Equal(t, "https://github.com/o/c/actions/runs/7", WorkflowRunURL("https://github.com/", "o/c", "7"))
	assert.Equal(t, "https://github.com/o/c/actions/runs/7", WorkflowRunURL("", "o/c", "7"))
	assert.Equal(t, "", WorkflowRunURL("https://github.com", "", "7"))
	assert.Equal(t, "", WorkflowRunURL("https://github.com", "o/c", ""))
}
