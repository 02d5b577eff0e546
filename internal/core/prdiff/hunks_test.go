package prdiff

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sampleDiff = "diff --git a/src/app.go b/src/app.go\n" +
	"index 1111111..2222222 100644\n" +
	"--- a/src/app.go\n" +
	"+++ b/src/app.go\n" +
	"@@ -10,4 +10,5 @@ func main() {\n" +
	" a\n" +
	"-b\n" +
	"+b2\n" +
	"+b3\n" +
	" c\n" +
	" d\n" +
	"@@ -40,2 +41,2 @@\n" +
	" x\n" +
	"-y\n" +
	"+y2\n" +
	"diff --git a/old.txt b/old.txt\n" +
	"deleted file mode 100644\n" +
	"--- a/old.txt\n" +
	"+++ /dev/null\n" +
	"@@ -1,2 +0,0 @@\n" +
	"-one\n" +
	"--- two\n" +
	"diff --git a/new.md b/new.md\n" +
	"new file mode 100644\n" +
	"--- /dev/null\n" +
	"+++ b/new.md\n" +
	"@@ -0,0 +1 @@\n" +
	"+hello\n" +
	"diff --git \"a/sp\\303\\251cial.txt\" \"b/sp\\303\\251cial.txt\"\n" +
	"--- \"a/sp\\303\\251cial.txt\"\n" +
	"+++ \"b/sp\\303\\251cial.txt\"\n" +
	"@@ -1 +1 @@\n" +
	"-a\n" +
	"+b\n"

func TestParseHunks(t *testing.T) {
	fs := Parse(sampleDiff)
	assert.Equal(t, []string{"new.md", "old.txt", "spécial.txt", "src/app.go"}, fs.Paths())
	assert.Equal(t, []Hunk{{10, 13, 10, 14}, {40, 41, 41, 42}}, fs.File("src/app.go").Hunks)
	assert.Equal(t, []Hunk{{1, 2, 0, -1}}, fs.File("old.txt").Hunks, "a removed line reading \"-- two\" is still a removed line")
	assert.Equal(t, []Hunk{{0, -1, 1, 1}}, fs.File("new.md").Hunks)
}

func TestCheckPosition(t *testing.T) {
	fs := Parse(sampleDiff)
	cases := []struct {
		name                 string
		path                 string
		line, start          int
		side, startSide, err string
	}{
		{"added line", "src/app.go", 12, 0, "", "", ""},
		{"context line right", "src/app.go", 14, 0, "RIGHT", "", ""},
		{"removed line left", "src/app.go", 11, 0, "LEFT", "", ""},
		{"range in one hunk", "src/app.go", 14, 10, "", "", ""},
		{"deleted file left", "old.txt", 2, 0, "LEFT", "", ""},
		{"new file", "new.md", 1, 0, "", "", ""},
		{"quoted path", "spécial.txt", 1, 0, "", "", ""},
		{"line outside the diff", "src/app.go", 30, 0, "", "", "src/app.go line 30 (RIGHT) is not in the pull request's diff; its hunks show RIGHT lines 10–14, 41–42"},
		{"range across hunks", "src/app.go", 41, 12, "", "", "not in one hunk"},
		{"start after line", "src/app.go", 12, 13, "", "", "must come before"},
		{"deleted file right", "old.txt", 1, 0, "RIGHT", "", "its hunks show no RIGHT lines"},
		{"path only in the base", "README.md", 1, 0, "", "", "README.md is not in the pull request's diff"},
		{"dot-dot path", "src/../../etc/passwd", 1, 0, "", "", "is not a file path of the repository"},
		{"absolute path", "/src/app.go", 12, 0, "", "", "is not a file path"},
		{"bad side", "src/app.go", 12, 0, "MIDDLE", "", "side must be RIGHT"},
		{"zero line", "src/app.go", 0, 0, "", "", "line must be 1 or more"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := fs.Check(c.path, c.line, c.start, c.side, c.startSide)
			if c.err == "" {
				require.NoError(t, err)
				return
			}
			var pe *PositionError
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, err.Error(), c.err)
		})
	}
}

func TestParseCutDiff(t *testing.T) {
	// A diff cut at a line end keeps only the lines it shows.
	cut := sampleDiff[:strings.Index(sampleDiff, "+b3\n")]
	fs := Parse(cut)
	require.NoError(t, fs.Check("src/app.go", 11, 0, "", ""))
	assert.Error(t, fs.Check("src/app.go", 12, 0, "", ""), "line 12 is past the cut")
	assert.Error(t, fs.Check("new.md", 1, 0, "", ""))
}

func FuzzParse(f *testing.F) {
	f.Add(sampleDiff)
	f.Add("@@ -1 +1 @@\n")
	f.Add("diff --git a/x b/x\n+++ b/x\n@@ -99999999999999999999,1 +1,-1 @@\n+x\n")
	f.Fuzz(func(t *testing.T, s string) {
		fs := Parse(s)
		for _, p := range fs.Paths() {
			for _, h := range fs.File(p).Hunks {
				_ = fs.Check(p, h.NewEnd, h.NewStart, "", "")
			}
		}
	})
}

// BenchmarkParse: a 1 MiB diff (the default cap), read once by the gate at
// start-up and once by publish.
func BenchmarkParse(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < DefaultMaxBytes; i++ {
		fmt.Fprintf(&sb, "diff --git a/f%d.go b/f%d.go\n--- a/f%d.go\n+++ b/f%d.go\n@@ -1,4 +1,5 @@\n a\n-b\n+b2\n+b3\n c\n d\n", i, i, i, i)
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Parse(text)
	}
}
