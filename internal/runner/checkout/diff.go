package checkout

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mention-runner/mention-runner/internal/core/prdiff"
)

// WriteDiff writes the pull request's diff at the fetched commit as
// DiffFile beside the pack and records it in the manifest (the fetch step,
// after Fetch; the diff itself is read with threadctx.FetchDiff).
func WriteDiff(outDir string, m *Manifest, d prdiff.Diff) error {
	if err := os.WriteFile(filepath.Join(outDir, DiffFile), []byte(d.Text), 0o644); err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	m.Diff = &DiffInfo{Bytes: len(d.Text), BytesTotal: d.Total, Truncated: d.Truncated, Unavailable: d.Unavailable}
	return writeManifest(outDir, *m)
}

// ReadDiff reads the diff WriteDiff wrote in artifactDir for m (checked
// by Unpack), refusing one whose size is not the manifest's or is over
// max (0 = prdiff.DefaultMaxBytes). ok is false when the fetch step fetched
// no diff.
func ReadDiff(artifactDir string, m Manifest, max int) (text string, rec prdiff.Record, ok bool, err error) {
	if max <= 0 {
		max = prdiff.DefaultMaxBytes
	}
	if m.Diff == nil {
		return "", prdiff.Record{}, false, nil
	}
	b, err := os.ReadFile(filepath.Join(artifactDir, DiffFile))
	if err != nil {
		return "", prdiff.Record{}, false, fmt.Errorf("checkout: read the pull request's diff: %w", err)
	}
	if len(b) != m.Diff.Bytes || len(b) > max {
		return "", prdiff.Record{}, false, fmt.Errorf("checkout: the pull request's diff is %d bytes; the manifest says %d and the cap is %d", len(b), m.Diff.Bytes, max)
	}
	return string(b), prdiff.Record{BytesTotal: m.Diff.BytesTotal, Truncated: m.Diff.Truncated, Unavailable: m.Diff.Unavailable}, true, nil
}
