package sanitize

import (
	"fmt"
	"strings"
	"testing"
)

func benchBody() string {
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString("Steps to reproduce: run `make test` and see the panic in café.go 🙂\n")
		b.WriteString("<!-- template: please describe -->\n")
		b.WriteString("zero\u200bwidth and \u202ebidi\n")
	}
	return b.String()
}

func BenchmarkText(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"ascii-1MB", strings.Repeat("plain ascii issue text, nothing to strip.\n", 1<<20/42)},
		{"mixed-1MB", benchBody()},
		{"openers-1MB", strings.Repeat("<!--", 1<<18)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			b.ReportAllocs()
			for b.Loop() {
				_ = Text(bc.in)
			}
		})
	}
}

func BenchmarkContext(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"trigger_comment":{"id":1000,"created_at":"2024-05-01T11:00:00Z","body":"@bot go"},"comments":[`)
	for i := range 1000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"body":"comment %d with <!-- hidden --> text\u200b and more words to make it realistic","created_at":"2024-05-01T%02d:%02d:00Z","updated_at":"2024-05-01T10:00:00Z","user":{"login":"u%d","id":%d}}`, i, i, i/60%24, i%60, i, i)
	}
	sb.WriteString(`],"diff":"` + strings.Repeat(`+line of code\n`, 20000) + `"}`)
	in := []byte(sb.String())
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Context(in, 1000); err != nil {
			b.Fatal(err)
		}
	}
}
