package security

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSealKeytab(t *testing.T) {
	key, err := NewKeytabKey()
	require.NoError(t, err)
	kt := []byte("\x05\x02 a keytab's bytes")
	sealed, err := SealKeytab(key, kt, "application_1_0001")
	require.NoError(t, err)
	require.False(t, bytes.Contains(sealed, kt), "sealed bytes hold the keytab")
	got, err := OpenSealedKeytab(key, sealed, "application_1_0001")
	require.NoError(t, err)
	require.Equal(t, kt, got)

	_, err = OpenSealedKeytab(key, sealed, "application_1_0002")
	require.ErrorContains(t, err, "does not open with the key")
	other, err := NewKeytabKey()
	require.NoError(t, err)
	_, err = OpenSealedKeytab(other, sealed, "application_1_0001")
	require.ErrorContains(t, err, "does not open with the key")
	changed := bytes.Clone(sealed)
	changed[len(changed)-1] ^= 1
	_, err = OpenSealedKeytab(key, changed, "application_1_0001")
	require.ErrorContains(t, err, "does not open with the key")
	_, err = OpenSealedKeytab(key, sealed[:10], "application_1_0001")
	require.EqualError(t, err, "security: sealed keytab of 10 bytes: not one tfyarn sealed")
	_, err = OpenSealedKeytab(key[:5], sealed, "application_1_0001")
	require.EqualError(t, err, "security: keytab key of 5 bytes, want 32")
}
