package filetools

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// allocated is the bytes fn allocates (runtime.MemStats.TotalAlloc, which
// only grows): deterministic, unlike a time or a resident size.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadHugeFileBoundedMemory: read_file and search_files on a 512 MiB
// file (sparse: a few lines of text, then zeros, no disk used) allocate a
// few MiB per call, not the file: it is streamed, the answer capped.
func TestReadHugeFileBoundedMemory(t *testing.T) {
	const size = 512 << 20
	const bound = 4 << 20
	dir := t.TempDir()
	text := "first line\nsecond TODO line\n" // the first 8 KiB hold no NUL: text to the sniffer
	text += strings.Repeat("x", 9000) + "\n"
	for p, s := range map[string]int64{"big.txt": size, "zeros.bin": size} {
		full := filepath.Join(dir, p)
		if p == "big.txt" {
			require.NoError(t, os.WriteFile(full, []byte(text), 0o644))
		} else {
			require.NoError(t, os.WriteFile(full, nil, 0o644))
		}
		require.NoError(t, os.Truncate(full, s))
	}
	f := open(t, dir, append(append([]string{}, contract.ReadFileTools...), contract.WriteFileTools...))

	cases := []struct {
		name  string
		call  func() (string, error)
		want  string
		isErr bool
	}{
		{"read from the start", func() (string, error) { return f.ReadFile("big.txt", 0, 0) },
			"     2\tsecond TODO line\n", false},
		{"read the huge line", func() (string, error) { return f.ReadFile("big.txt", 4, 1) },
			"(line 4 is longer than 262144 bytes and is shown cut; read on with offset 5)", false},
		{"read a binary file", func() (string, error) { return f.ReadFile("zeros.bin", 0, 0) },
			"(zeros.bin is a binary file of 536870912 bytes)", false},
		{"search", func() (string, error) { return f.SearchFiles("TODO", "", "") },
			"big.txt:2: second TODO line\n", false},
		{"search matching the huge line", func() (string, error) { return f.SearchFiles("^\\x00", "", "big.txt") },
			"big.txt:4: ", false},
		{"edit refused", func() (string, error) { return f.EditFile("big.txt", "first", "1st", false) },
			"over the 4194304-byte limit", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got string
			var err error
			n := allocated(func() { got, err = c.call() })
			if c.isErr {
				assert.ErrorContains(t, err, c.want)
			} else {
				require.NoError(t, err)
				assert.Contains(t, got, c.want)
				assert.LessOrEqual(t, len(got), MaxReadBytes+1024)
			}
			t.Logf("%s: %d bytes allocated", c.name, n)
			assert.Less(t, n, uint64(bound), "bytes allocated by one call on a %d-byte file", size)
		})
	}
}

// FuzzLineReader: lineReader yields bufio.ScanLines' lines, each cut to
// max bytes (cut set exactly when the line is longer), with a buffer
// smaller than some lines.
func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "a\r\nbb\n\nccc", strings.Repeat("x", 40) + "\nshort\n" + strings.Repeat("y", 17)} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 1 || max > 64 {
			return
		}
		var want []string
		sc := bufio.NewScanner(strings.NewReader(s))
		sc.Buffer(nil, len(s)+1)
		for sc.Scan() {
			want = append(want, sc.Text())
		}
		lr := lineReader{br: bufio.NewReaderSize(strings.NewReader(s), 16), max: max}
		for i := 0; ; i++ {
			line, cut, err := lr.next()
			if errors.Is(err, io.EOF) {
				require.Len(t, want, i)
				return
			}
			require.NoError(t, err)
			require.Less(t, i, len(want))
			w := want[i]
			if len(w) > max || (len(w) == max && cut) {
				// a cut line keeps its first max bytes, a "\r" among them
				raw := strings.SplitAfter(s, "\n")[i]
				require.True(t, cut, "line %d %q", i, w)
				require.Equal(t, strings.TrimSuffix(raw, "\n")[:max], string(line))
				continue
			}
			require.False(t, cut, "line %d %q", i, w)
			require.Equal(t, w, string(line))
		}
	})
}
