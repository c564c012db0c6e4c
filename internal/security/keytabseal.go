package security

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// A --keytab job's keytab is sealed for its AM: the sealed bytes go to the
// job's staging directory (and from there to the AM's container), the key
// travels in the AM's credentials. Neither alone is the keytab, and once
// the job ends the sealed bytes are gone.

// KeytabKeyBytes is the length of the key a keytab is sealed with
// (AES-256-GCM).
const KeytabKeyBytes = 32

// MaxSealedKeytabBytes bounds a sealed keytab read back: a keytab of the
// submission's bound (256 KiB) with its nonce and tag.
const MaxSealedKeytabBytes = 256<<10 + 64

// NewKeytabKey is a fresh random key for SealKeytab.
func NewKeytabKey() ([]byte, error) {
	k := make([]byte, KeytabKeyBytes)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("security: keytab key: %w", err)
	}
	return k, nil
}

// SealKeytab encrypts keytab under key, bound to appID (the sealed bytes
// of one application do not open as another's).
func SealKeytab(key, keytab []byte, appID string) ([]byte, error) {
	aead, err := keytabAEAD(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("security: seal keytab: %w", err)
	}
	return aead.Seal(nonce, nonce, keytab, []byte(appID)), nil
}

// OpenSealedKeytab is the keytab SealKeytab sealed under key for appID.
func OpenSealedKeytab(key, sealed []byte, appID string) ([]byte, error) {
	aead, err := keytabAEAD(key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize()+aead.Overhead() || len(sealed) > MaxSealedKeytabBytes {
		return nil, fmt.Errorf("security: sealed keytab of %d bytes: not one tfyarn sealed", len(sealed))
	}
	kt, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(appID))
	if err != nil {
		return nil, errors.New("security: the sealed keytab does not open with the key in the AM's credentials (not this application's, or changed)")
	}
	return kt, nil
}

func keytabAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != KeytabKeyBytes {
		return nil, fmt.Errorf("security: keytab key of %d bytes, want %d", len(key), KeytabKeyBytes)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
