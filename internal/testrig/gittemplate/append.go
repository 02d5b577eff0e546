package gittemplate

import (
	"os"
	"testing"
)

// Append adds text to the file at path, creating it: a test's setting in
// a repository's config or an included file, a .gitattributes line.
func Append(t testing.TB, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatalf("gittemplate: append to %s: %v", path, err)
	}
}
