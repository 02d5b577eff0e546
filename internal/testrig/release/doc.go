// Package release checks how mention-runner is shipped and pinned: the
// GoReleaser configuration, the install script the action and the
// dispatcher workflow use to run a release binary verified by checksum,
// and that no workflow or action runs code from a ref that can move.
// Its tests read the repository's files; the package has no code of its
// own to link into a binary.
package release
