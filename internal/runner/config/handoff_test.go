package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// TestAssembleArtifactCarriesHandOffFiles: every file assemble writes
// beside the context for the next jobs is in the artifact the prepare job
// uploads (a file left out would silently weaken the gate: no opt-out
// snapshot, no repository ids).
func TestAssembleArtifactCarriesHandOffFiles(t *testing.T) {
	_, jobs := readAgentRun(t)
	var paths string
	for _, s := range jobs["prepare"].Steps {
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			paths += s.With["path"]
		}
	}
	for _, f := range []string{contract.ContextFile, contract.BlocklistSnapshotFile, contract.RepoIDsFile} {
		assert.Contains(t, strings.Fields(paths), "runs/"+f)
	}
}
