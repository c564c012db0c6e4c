//go:build linux

package security

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// readKeyringCCache reads the KEYRING cache residual names, read-only: it
// finds the collection, the primary or named cache and its keys as MIT's
// libkrb5 does, but creates nothing of the user's (MIT's resolve creates an
// empty collection and primary name when they are missing; here that is
// "no such cache"). The only thing it links is, like MIT, the persistent
// keyring or a user-anchored collection into this process's own keyring,
// which gives the process possession of the keys (their owner-only
// permissions allow reading only to a possessor) and goes away with it.
// It returns the cache's full name (anchor:collection:subsidiary).
func readKeyringCCache(residual string) (keyringCCache, keyringResidual, error) {
	name := parseKeyringResidual(residual)
	// A thread keyring belongs to one OS thread: stay on it throughout.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	collection, err := keyringCollection(name)
	if err != nil && !errors.Is(err, errNoKeyringCache) {
		return keyringCCache{}, name, err
	}
	var cache int
	switch {
	case err == nil:
		if name.Subsidiary == "" {
			if name.Subsidiary, err = keyringPrimary(collection, name); err != nil {
				return keyringCCache{}, name, err
			}
		}
		cache, err = keyringSearch(collection, "keyring", name.Subsidiary, 0)
		if errors.Is(err, errNoKeyringCache) && name.Anchor == "legacy" {
			// MIT's older KEYRING code linked the cache itself into the session keyring.
			cache, err = keyringSearch(unix.KEY_SPEC_SESSION_KEYRING, "keyring", name.Subsidiary, 0)
		}
	case name.Anchor == "legacy":
		if name.Subsidiary == "" {
			name.Subsidiary = name.Collection
		}
		cache, err = keyringSearch(unix.KEY_SPEC_SESSION_KEYRING, "keyring", name.Subsidiary, 0)
	}
	if err != nil {
		return keyringCCache{}, name, err
	}
	c, err := readCacheKeyring(cache)
	return c, name, err
}

// keyringCollection finds the collection keyring of name's anchor.
func keyringCollection(name keyringResidual) (int, error) {
	var anchor, possess int
	switch name.Anchor {
	case "persistent":
		uid := os.Geteuid()
		if name.Collection != "" {
			n, err := strconv.Atoi(name.Collection)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("%w: KEYRING:persistent: takes a numeric uid, not %q", errBadKeyringName, name.Collection)
			}
			uid = n
		}
		persistent, err := unix.KeyctlInt(unix.KEYCTL_GET_PERSISTENT, uid, unix.KEY_SPEC_PROCESS_KEYRING, 0, 0)
		switch {
		case errors.Is(err, unix.EOPNOTSUPP) && uid == os.Geteuid():
			// A kernel without persistent keyrings: MIT uses the user keyring.
			persistent, possess = unix.KEY_SPEC_USER_KEYRING, unix.KEY_SPEC_PROCESS_KEYRING
		case err != nil:
			return 0, fmt.Errorf("the persistent keyring of uid %d: %w", uid, err)
		}
		return keyringSearch(persistent, "keyring", keyringPersistentName, possess)
	case "process":
		anchor = unix.KEY_SPEC_PROCESS_KEYRING
	case "thread":
		anchor = unix.KEY_SPEC_THREAD_KEYRING
	case "session", "legacy":
		anchor = unix.KEY_SPEC_SESSION_KEYRING
	case "user":
		// The user keyring confers no possession: link the collection to
		// this process's keyring, as MIT does.
		anchor, possess = unix.KEY_SPEC_USER_KEYRING, unix.KEY_SPEC_PROCESS_KEYRING
	default:
		return 0, fmt.Errorf("%w: the anchor %q is none of persistent, user, session, process and thread", errBadKeyringName, name.Anchor)
	}
	return keyringSearch(anchor, "keyring", keyringCollectionPrefix+name.Collection, possess)
}

// keyringPrimary is the name of the collection's primary cache; without a
// krb_ccache:primary key MIT would make it the collection's name ("tkt"
// for an empty one).
func keyringPrimary(collection int, name keyringResidual) (string, error) {
	key, err := keyringSearch(collection, "user", keyringPrimaryKey, 0)
	if errors.Is(err, errNoKeyringCache) {
		if name.Collection == "" {
			return "tkt", nil
		}
		return name.Collection, nil
	}
	if err != nil {
		return "", err
	}
	b, err := readKey(key, maxKeyringPayload)
	if err != nil {
		return "", fmt.Errorf("%s: %w", keyringPrimaryKey, err)
	}
	return parseKeyringIndex(b)
}

// readCacheKeyring reads one cache keyring: its principal key, its time
// offsets and every other key as a credential. Keys unlinked while it reads
// (a kinit or kdestroy at the same time) are skipped, as MIT does.
func readCacheKeyring(cache int) (keyringCCache, error) {
	var c keyringCCache
	princ, err := keyringSearch(cache, "user", keyringPrincipalKey, 0)
	if errors.Is(err, errNoKeyringCache) {
		return c, fmt.Errorf("%w (the cache keyring has no %s: kinit has not finished with it)", errNoKeyringCache, keyringPrincipalKey)
	}
	if err != nil {
		return c, err
	}
	if c.Principal, err = readKey(princ, maxKeyringPayload); err != nil {
		return c, fmt.Errorf("%s: %w", keyringPrincipalKey, err)
	}
	if err := checkKeyringPrincipal(c.Principal); err != nil {
		return c, err
	}
	offsets, err := keyringSearch(cache, "user", keyringTimeOffsetsKey, 0)
	switch {
	case err == nil:
		if c.TimeOffsets, err = readKey(offsets, maxKeyringPayload); err != nil {
			return c, fmt.Errorf("%s: %w", keyringTimeOffsetsKey, err)
		}
		if err := checkKeyringTimeOffsets(c.TimeOffsets); err != nil {
			return c, err
		}
	case !errors.Is(err, errNoKeyringCache):
		return c, err
	}
	list, err := readKey(cache, 4*maxKeyringKeys)
	if err != nil {
		return c, fmt.Errorf("listing the cache keyring: %w", err)
	}
	if len(list)%4 != 0 {
		return c, fmt.Errorf("the cache keyring's list is %d bytes, not whole key ids", len(list))
	}
	total := len(c.Principal)
	for i := 0; i < len(list); i += 4 {
		key := int(int32(binary.NativeEndian.Uint32(list[i:])))
		if key == princ || key == offsets {
			continue
		}
		b, err := readKey(key, maxKeyringPayload)
		if errors.Is(err, unix.ENOKEY) || errors.Is(err, unix.EACCES) {
			continue
		}
		if err != nil {
			return c, fmt.Errorf("credential key %s: %w", describeKey(key), err)
		}
		if err := checkKeyringCredential(b, describeKey(key)); err != nil {
			return c, err
		}
		if total += len(b); total > maxKeyringCCache {
			return c, fmt.Errorf("the cache holds more than %d bytes", maxKeyringCCache)
		}
		c.Credentials = append(c.Credentials, b)
	}
	return c, nil
}

// keyringSearch finds a key of the type and description in (and below)
// ring; errNoKeyringCache when there is none. With possess, the key found
// is also linked there.
func keyringSearch(ring int, keyType, description string, possess int) (int, error) {
	id, err := unix.KeyctlSearch(ring, keyType, description, possess)
	switch {
	case err == nil:
		return id, nil
	case errors.Is(err, unix.ENOKEY):
		return 0, fmt.Errorf("%w (no %s %q)", errNoKeyringCache, keyType, description)
	case errors.Is(err, unix.EKEYEXPIRED), errors.Is(err, unix.EKEYREVOKED):
		return 0, fmt.Errorf("%w (%s %q: %v)", errKeyringExpired, keyType, description, err)
	}
	return 0, fmt.Errorf("looking for %s %q: %w", keyType, description, err)
}

// readKey reads a key's payload (a keyring's: its keys' ids), refusing one
// larger than limit. A payload that grows between the two reads is read
// again, a bounded number of times.
func readKey(id, limit int) ([]byte, error) {
	size, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, nil, 0)
	for range 3 {
		if err != nil {
			return nil, err
		}
		if size > limit {
			return nil, fmt.Errorf("%d bytes, more than the %d a cache's key may hold", size, limit)
		}
		buf := make([]byte, size)
		var n int
		n, err = unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		if err == nil && n <= size {
			return buf[:n], nil
		}
		size = n
	}
	return nil, fmt.Errorf("its size kept changing while it was read")
}

// describeKey names a key for messages: its type and description.
func describeKey(id int) string {
	d, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, id)
	if err != nil {
		return strconv.Itoa(id)
	}
	parts := strings.SplitN(d, ";", 5)
	if len(parts) != 5 {
		return strconv.Itoa(id)
	}
	return fmt.Sprintf("%s %q", parts[0], parts[4])
}
