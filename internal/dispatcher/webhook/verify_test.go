package webhook

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerify(t *testing.T) {
	secret := []byte("It's a Secret to Everybody")
	body := []byte("Hello, World!")
	// The worked example from GitHub's "Validating webhook deliveries" docs.
	const docSig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	require.Equal(t, docSig, Sign(secret, body))

	cases := []struct {
		name    string
		secret  []byte
		body    []byte
		header  string
		wantErr error // nil = valid
		msg     string
	}{
		{"valid", secret, body, docSig, nil, ""},
		{"valid upper-case hex", secret, body, "sha256=" + strings.ToUpper(strings.TrimPrefix(docSig, "sha256=")), nil, ""},
		{"body changed", secret, []byte("Hello, World?"), docSig, ErrBadSignature, ""},
		{"other secret", []byte("nope"), body, docSig, ErrBadSignature, ""},
		{"no header", secret, body, "", ErrBadSignature, "no X-Hub-Signature-256"},
		{"sha1 header", secret, body, "sha1=0123456789abcdef0123456789abcdef01234567", ErrBadSignature, "does not start with"},
		{"not hex", secret, body, "sha256=zz", ErrBadSignature, "not a hex"},
		{"short digest", secret, body, docSig[:len(docSig)-2], ErrBadSignature, "not a hex"},
		{"empty secret fails closed", nil, body, docSig, ErrNoSecret, ""},
		{"empty secret even with matching empty-key sig", []byte{}, body, Sign(nil, body), ErrNoSecret, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Verify(c.secret, c.body, c.header)
			if c.wantErr == nil {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, c.wantErr)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

func FuzzVerify(f *testing.F) {
	f.Add([]byte("s"), []byte("body"), "sha256=00")
	f.Add([]byte("It's a Secret to Everybody"), []byte("Hello, World!"), "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")
	f.Fuzz(func(t *testing.T, secret, body []byte, header string) {
		err := Verify(secret, body, header)
		if len(secret) == 0 {
			require.ErrorIs(t, err, ErrNoSecret)
			return
		}
		if err == nil {
			// Only the one true signature (in any hex case) verifies.
			require.Equal(t, Sign(secret, body), strings.ToLower(header))
		}
		require.NoError(t, Verify(secret, body, Sign(secret, body)))
	})
}

func BenchmarkVerify(b *testing.B) {
	secret := []byte("webhook-secret")
	body := example(b, "pull_request_review_comment.created")
	sig := Sign(secret, body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Verify(secret, body, sig); err != nil {
			b.Fatal(err)
		}
	}
}
