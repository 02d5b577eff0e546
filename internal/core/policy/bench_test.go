package policy

import "testing"

// The gate calls Apply on every write the agent asks for; the dispatcher
// parses every !cfg line it sees.

func BenchmarkParseFlags(b *testing.B) {
	words := []string{"comment-only", "repo=Foo/Bar", "repo=foo/baz", "deny=x/y", "issue-limit=3", "comment-limit=2"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFlags(words); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	p := mustPolicy(b, "repo=foo/bar repo=foo/baz deny=x/y comment-limit=1000", Ceilings{CommentLimit: 1000, MaxWrites: 1000}, fakeBlocker{"a/*": true})
	l := Replay([]Action{comment("foo/bar", 1), comment("foo/bar", 2)})
	a := comment("Foo/Bar", 1)
	b.ReportAllocs()
	for b.Loop() {
		if !p.Decide(a, l).Allowed {
			b.Fatal("denied")
		}
	}
}

func BenchmarkApplyDenied(b *testing.B) {
	p := mustPolicy(b, "here-only", DefaultCeilings(), nil)
	l := NewLedger()
	a := comment("other/repo", 3)
	b.ReportAllocs()
	for b.Loop() {
		if p.Apply(a, l).Allowed {
			b.Fatal("allowed")
		}
	}
}
