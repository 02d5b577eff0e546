package benchreport

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// FloorTransport is the least any transport of a context must do: base64
// encode it, decode it, and check once that it is JSON. make bench runs it
// as a process (benchreport floor transport) beside the real pipeline.
func FloorTransport(r io.Reader, w io.Writer) error {
	ctx, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("floor transport: read: %w", err)
	}
	out, err := base64.StdEncoding.DecodeString(base64.StdEncoding.EncodeToString(ctx))
	if err != nil {
		return fmt.Errorf("floor transport: %w", err)
	}
	if !json.Valid(out) {
		return errors.New("floor transport: input is not JSON")
	}
	_, err = w.Write(out)
	return err
}

// FloorRender is the least a renderer of a stream-json log must do: read
// every line and check that it is JSON (encoding/json.Valid).
func FloorRender(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("floor render: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) > 0 && !json.Valid(sc.Bytes()) {
			return fmt.Errorf("floor render: line %d is not JSON", n)
		}
	}
	return sc.Err()
}
