package shardstore

import (
	"crypto/sha1" // git object ids are SHA-1; this is identification, not security
	"encoding/hex"
	"strconv"
)

// pieceFile is the one entry of every shard tree.
const pieceFile = "piece.b64"

// blobSHA is the git object id of a blob holding content.
func blobSHA(content []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// treeSHA is the git object id of a tree with the single entry
// "100644 piece.b64" → blob. ok is false when blob is not a hex sha.
func treeSHA(blob string) (string, bool) {
	raw, err := hex.DecodeString(blob)
	if err != nil || len(raw) != sha1.Size {
		return "", false
	}
	entry := append([]byte("100644 "+pieceFile+"\x00"), raw...)
	h := sha1.New()
	h.Write([]byte("tree " + strconv.Itoa(len(entry)) + "\x00"))
	h.Write(entry)
	return hex.EncodeToString(h.Sum(nil)), true
}
