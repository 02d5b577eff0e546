// Package benchreport measures mention-runner's named hot paths and prints
// them as one markdown table (`make bench`, issue 8). Each row carries the
// command that reproduces it, so the README's Performance section can quote
// the table as is.
package benchreport
