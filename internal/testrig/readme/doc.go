// Package readme keeps README.md and docs/*.md true: its tests run the
// offline shell examples exactly as written and check that every other
// shell command in them names a Makefile target that exists. The package has no code of its own.
package readme
