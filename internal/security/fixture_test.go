package security

// Fixed values shared with testcluster's CredentialsTool.java (write):
// keep both in sync.

func pattern(n, mul, add int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*mul + add)
	}
	return b
}

func descending(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(0xff - i)
	}
	return b
}

// fixtureCredentials is what CredentialsTool writes: an identifier over 127
// bytes (two-byte vint length), bytes >= 0x80 everywhere, and a 300-byte
// secret.
func fixtureCredentials() *Credentials {
	c := NewCredentials()
	c.AddToken("amrm-alias", Token{
		Identifier: pattern(200, 37, 11),
		Password:   pattern(20, 1, 0x80),
		Kind:       KindAMRMToken,
		Service:    "127.0.0.1:8030",
	})
	c.AddToken("hdfs-alias", Token{
		Identifier: descending(16),
		Password:   []byte{0x00, 0x7f, 0x80, 0xff},
		Kind:       KindHDFSDelegation,
		Service:    "ha-hdfs:ns1",
	})
	c.AddSecret("secret-key", pattern(300, 1, 0))
	return c
}
