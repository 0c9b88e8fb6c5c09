package resourceapply

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Hash returns a deterministic digest of obj's JSON form: encoding/json writes struct fields in declaration order
// and map keys sorted, so equal objects always hash equally. The JSON is streamed into the digest, never held whole.
func Hash(obj any) (string, error) {
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(obj); err != nil {
		return "", fmt.Errorf("can't hash %T: %w", obj, err)
	}

	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])), nil
}
