// Package benchreport measures mention-runner's named hot paths and prints
// them as one markdown table (`make bench`). Each row carries the command
// that reproduces it, so docs/performance.md can quote the table as is.
package benchreport
