package hadoopconf

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/authtolocal"
)

// TestAuthToLocal: the rules and mechanism come from core-site.xml
// (multi-line values included); unset means DEFAULT; a bad rule or
// mechanism is an error naming the setting and its file.
func TestAuthToLocal(t *testing.T) {
	load := func(props ...string) *Config {
		dir := writeFiles(t, map[string]string{"core-site.xml": siteXML(props...)})
		conf, err := LoadDir(dir)
		require.NoError(t, err)
		return conf
	}

	rules, err := load().AuthToLocal()
	require.NoError(t, err)
	require.Equal(t, "DEFAULT", rules.String())
	require.Equal(t, authtolocal.MechanismHadoop, rules.Mechanism())
	_, err = rules.Map("alice@OTHER.COM", "EXAMPLE.COM")
	require.ErrorContains(t, err, "no auth_to_local rule maps the principal alice@OTHER.COM to a user name (hadoop.security.auth_to_local is unset: DEFAULT)")

	conf := load(authtolocal.KeyRules, `
        RULE:[1:$1@$0](.*@CORP\.EXAMPLE\.COM)s/@.*//
        RULE:[2:$1@$0](hdfs@EXAMPLE\.COM)s/.*/hdfs/
        RULE:[1:$1](A[a-z]+)s/^A/a/L
        DEFAULT
      `, authtolocal.KeyMechanism, "MIT")
	rules, err = conf.AuthToLocal()
	require.NoError(t, err)
	require.Equal(t, authtolocal.MechanismMIT, rules.Mechanism())
	require.Contains(t, rules.Source, "core-site.xml")
	for principal, want := range map[string]string{
		"alice.smith@CORP.EXAMPLE.COM":     "alice.smith",
		"hdfs/nn1.example.com@EXAMPLE.COM": "hdfs",
		"Alice@EXAMPLE.COM":                "alice",
		"bob@EXAMPLE.COM":                  "bob",
		"bob@OTHER.COM":                    "bob@OTHER.COM", // mit keeps what no rule maps
	} {
		got, err := rules.Map(principal, "EXAMPLE.COM")
		require.NoError(t, err, principal)
		require.Equal(t, want, got, principal)
	}

	_, err = load(authtolocal.KeyRules, `RULE:[1:$1]s/(a)\1/b/`).AuthToLocal()
	require.ErrorContains(t, err, `hadoop.security.auth_to_local (from `)
	require.ErrorContains(t, err, `core-site.xml): auth_to_local rule "RULE:[1:$1]s/(a)\\1/b/": s/(a)\1/: \1 is a backreference`)

	_, err = load(authtolocal.KeyRules, `RULE[1:$1]`).AuthToLocal()
	require.ErrorContains(t, err, `not DEFAULT nor RULE:[n:format]`)

	_, err = load(authtolocal.KeyMechanism, "kerberos").AuthToLocal()
	require.ErrorContains(t, err, `hadoop.security.auth_to_local.mechanism = "kerberos" is neither hadoop nor mit (from `)
}
