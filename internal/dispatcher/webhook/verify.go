// Package webhook verifies and decodes the GitHub webhook deliveries that can
// carry a mention of the bot, turning each into one Trigger.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrBadSignature means the X-Hub-Signature-256 header is missing, malformed
// or does not match the body; the caller answers 401 and drops the delivery.
var ErrBadSignature = errors.New("webhook signature does not match")

// ErrNoSecret means no webhook secret is configured. Verification then fails
// closed: an unauthenticated delivery must never be trusted.
var ErrNoSecret = errors.New("webhook secret is not configured")

const signaturePrefix = "sha256="

// Verify checks the X-Hub-Signature-256 header ("sha256=<hex HMAC-SHA256 of
// body>") against secret, comparing in constant time.
func Verify(secret, body []byte, signatureHeader string) error {
	if len(secret) == 0 {
		return ErrNoSecret
	}
	if signatureHeader == "" {
		return fmt.Errorf("%w: no X-Hub-Signature-256 header", ErrBadSignature)
	}
	hexSig, ok := strings.CutPrefix(signatureHeader, signaturePrefix)
	if !ok {
		return fmt.Errorf("%w: header does not start with %q", ErrBadSignature, signaturePrefix)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: header is not a hex SHA-256 digest", ErrBadSignature)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return ErrBadSignature
	}
	return nil
}

// Sign returns the X-Hub-Signature-256 header value GitHub would send for
// body; tests and the dispatcher's `event` command use it to build deliveries.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}
