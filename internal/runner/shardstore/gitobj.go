package shardstore

import "github.com/mention-runner/mention-runner/internal/core/refpush"

// pieceFile is the one entry of every shard tree.
const pieceFile = "piece.b64"

// blobSHA is the git object id of a blob holding content.
func blobSHA(content []byte) string { return refpush.Blob(content).SHA() }

// pieceTree is the tree with the single entry "100644 piece.b64" → blob.
// ok is false when blob is not a hex sha.
func pieceTree(blob string) (refpush.Object, bool) {
	t, err := refpush.Tree(refpush.TreeEntry{Name: pieceFile, Blob: blob})
	return t, err == nil
}

// treeSHA is the git object id of pieceTree(blob).
func treeSHA(blob string) (string, bool) {
	t, ok := pieceTree(blob)
	if !ok {
		return "", false
	}
	return t.SHA(), true
}
