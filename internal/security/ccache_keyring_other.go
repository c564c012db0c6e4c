//go:build !linux

package security

import "errors"

// readKeyringCCache: KEYRING caches are Linux kernel keyrings.
func readKeyringCCache(residual string) (keyringCCache, keyringResidual, error) {
	return keyringCCache{}, parseKeyringResidual(residual), errors.New("KEYRING ticket caches exist on Linux only")
}
