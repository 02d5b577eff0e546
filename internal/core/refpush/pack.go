package refpush

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
)

// Object types in a pack.
const (
	packCommit = 1
	packTree   = 2
	packBlob   = 3
)

type packObject struct {
	typ  int
	data []byte
}

// encodePack writes a version 2 pack of objs, undeltified: git's pack
// format (gitformat-pack), which receive-pack indexes and checks.
func encodePack(objs []packObject) []byte {
	var b bytes.Buffer
	b.WriteString("PACK")
	_ = binary.Write(&b, binary.BigEndian, uint32(2))
	_ = binary.Write(&b, binary.BigEndian, uint32(len(objs)))
	for _, o := range objs {
		// type and size: 3 bits of type and the size's low 4 bits, then
		// 7 bits a byte, the high bit saying another byte follows
		size := len(o.data)
		c := byte(o.typ<<4) | byte(size&0x0f)
		size >>= 4
		for size > 0 {
			b.WriteByte(c | 0x80)
			c = byte(size & 0x7f)
			size >>= 7
		}
		b.WriteByte(c)
		zw := zlib.NewWriter(&b)
		_, _ = zw.Write(o.data)
		_ = zw.Close()
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}
