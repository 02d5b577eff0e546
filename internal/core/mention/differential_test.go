package mention

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// The differential oracle: goldmark (CommonMark 0.31 + GitHub's extensions)
// parses the body, and a byte is "rendered text where GitHub would link a
// mention" when it lies in a Text node that is not inside a block quote (the
// SPEC's rule), a link, an image, an autolink, code, an HTML block, or
// between an inline HTML open tag and its close (GitHub links no mention
// inside <a>, <code> or <pre>; we treat every inline element alike). The
// scanner may find fewer mentions than that (its documented simplifications
// only drop mentions) but never one outside it.
var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

// renderedText returns, for each byte of body, whether it is such text.
func renderedText(body string) []bool {
	src := []byte(body)
	out := make([]bool, len(src))
	doc := gfm.Parser().Parse(text.NewReader(src))
	depth := 0    // open inline HTML elements in the current block
	excluded := 0 // enclosing nodes that hide mentions
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n := n.(type) {
		case *ast.Blockquote, *ast.Link, *ast.Image, *ast.AutoLink, *ast.CodeSpan,
			*ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock:
			if entering {
				excluded++
			} else {
				excluded--
			}
			return ast.WalkContinue, nil
		case *ast.RawHTML:
			if entering {
				depth = max(0, depth+htmlDepthChange(n.Segments.Value(src)))
			}
			return ast.WalkContinue, nil
		case *ast.Text:
			if entering && excluded == 0 && depth == 0 {
				for i := n.Segment.Start; i < n.Segment.Stop; i++ {
					out[i] = true
				}
			}
			return ast.WalkContinue, nil
		}
		if n.Type() == ast.TypeBlock && entering {
			depth = 0
		}
		return ast.WalkContinue, nil
	})
	return out
}

// htmlDepthChange says how an inline HTML token changes element depth.
func htmlDepthChange(tag []byte) int {
	switch {
	case bytes.HasPrefix(tag, []byte("</")):
		return -1
	case bytes.HasPrefix(tag, []byte("<!")), bytes.HasPrefix(tag, []byte("<?")),
		bytes.HasSuffix(tag, []byte("/>")), isVoidTag(tag):
		return 0
	}
	return 1
}

func isVoidTag(tag []byte) bool {
	name := tag[1:]
	for i, c := range name {
		if !isASCIIAlnum(c) && c != '-' {
			name = name[:i]
			break
		}
	}
	switch strings.ToLower(string(name)) {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr":
		return true
	}
	return false
}

// checkAgainstCommonMark fails when Find reports a mention that the
// oracle says GitHub would not render as one.
func checkAgainstCommonMark(t *testing.T, body, bot string) {
	t.Helper()
	ok := renderedText(body)
	for _, m := range Find(body, bot) {
		end := m.Offset + 1 + len(bot)
		for i := m.Offset; i < end; i++ {
			if !ok[i] {
				t.Fatalf("mention at line %d (offset %d) is not rendered text per CommonMark:\n%q", m.Line, m.Offset, body)
			}
		}
	}
}

// FuzzFindCommonMark is the differential target: the scanner never counts
// a mention where the CommonMark reading of the body shows none.
func FuzzFindCommonMark(f *testing.F) {
	for _, c := range differentialSeeds {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if len(body) > 4096 {
			return
		}
		checkAgainstCommonMark(t, body, "bot")
	})
}

// differentialSeeds are bodies that once disagreed, and the shapes that
// matter: quotes and their lazy lines, HTML blocks, links, inline HTML.
var differentialSeeds = []string{
	"> **Note**\n@bot go away",
	"> a\n@bot",
	"<pre>\n@bot\n</pre>",
	"<div>\n@bot\n</div>",
	"<!-- x --> @bot",
	"[@bot](http://x)",
	"[ @bot ](http://x)",
	"[x]: http://x '@bot'\n",
	"a <a href=x> @bot</a>",
	"a <span title=\" @bot\">x</span>",
	"- > a\n  @bot",
	"@bot !cfg here-only\nfix it",
	"```\n@bot\n```\n@bot",
}

// TestFindAgreesWithCommonMark runs the differential check over every body
// in the table tests and the fuzz corpus, so `go test` keeps them agreeing.
func TestFindAgreesWithCommonMark(t *testing.T) {
	bodies := append([]string(nil), differentialSeeds...)
	for _, c := range findCases {
		bodies = append(bodies, c.body)
	}
	for _, dir := range []string{"FuzzFind", "FuzzFindCommonMark"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", dir, "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			if s, ok := corpusString(string(b)); ok {
				bodies = append(bodies, s)
			}
		}
	}
	for _, b := range bodies {
		checkAgainstCommonMark(t, b, "bot")
	}
}

// corpusString reads the first string of a "go test fuzz v1" file.
func corpusString(file string) (string, bool) {
	lines := strings.Split(file, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "string(") {
		return "", false
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "string("), ")"))
	return s, err == nil
}
