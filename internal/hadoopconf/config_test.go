package hadoopconf

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestExpansion(t *testing.T) {
	env := envOf("HOME_DIR", "/home/u", "EMPTY", "")
	c := confOf(t, env,
		"a", "A",
		"b", "${a}-${a}",
		"nested", "x${b}y",
		"unbound", "p${nope}q${a}",
		"self", "pre${self}post",
		"loop1", "${loop2}",
		"loop2", "${loop1}",
		"env", "${env.HOME_DIR}/x",
		"env.unset", "${env.MISSING}",
		"env.dash", "${env.MISSING-dflt}",
		"env.dash.empty", "${env.EMPTY-dflt}",
		"env.colon", "${env.EMPTY:-dflt}",
		"env.colon.set", "${env.HOME_DIR:-dflt}",
		"inner", "${a${suffix}}",
		"suffix", "",
		"aX", "inner-ok",
		"space", "${not a var}",
		"empty", "${}",
		"trim", "  padded  \n",
		"rm", "${yarn.resourcemanager.hostname}",
		"sys", "/tmp/hadoop-${user.name}",
		"deep0", "${deep1}", "deep1", "${deep2}", "deep2", "${deep3}", "deep3", "${deep4}",
		"deep4", "${deep5}", "deep5", "${deep6}", "deep6", "${deep7}", "deep7", "${deep8}",
		"deep8", "${deep9}", "deep9", "${deep10}", "deep10", "${deep11}", "deep11", "${deep12}",
		"deep12", "${deep13}", "deep13", "${deep14}", "deep14", "${deep15}", "deep15", "${deep16}",
		"deep16", "${deep17}", "deep17", "${deep18}", "deep18", "${deep19}", "deep19", "${deep20}",
		"deep20", "bottom",
		"deep1b", "${deep2}",
	)
	tests := []struct {
		key, want string
		err       string
	}{
		{key: "b", want: "A-A"},
		{key: "nested", want: "xA-Ay"},
		{key: "unbound", want: "p${nope}q${a}"}, // Hadoop stops at the first unbound var
		{key: "self", want: "pre${self}post"},
		{key: "loop1", err: "depth too large"},
		{key: "env", want: "/home/u/x"},
		{key: "env.unset", want: "${env.MISSING}"},
		{key: "env.dash", want: "dflt"},
		{key: "env.dash.empty", want: ""},
		{key: "env.colon", want: "dflt"},
		{key: "env.colon.set", want: "/home/u"},
		{key: "space", want: "${not a var}"},
		{key: "empty", want: "${}"},
		{key: "trim", want: "padded"},
		{key: "rm", want: "0.0.0.0"},
		{key: "deep0", err: "depth too large"}, // 20 substitutions: Hadoop gives up before checking the result
		{key: "deep1b", want: "bottom"},        // 19 substitutions
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok, err := c.Lookup(tt.key)
			require.True(t, ok)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				require.ErrorContains(t, err, tt.key)
				raw, _ := c.Raw(tt.key)
				v, _ := c.Get(tt.key)
				require.Equal(t, raw, v, "Get falls back to the raw value")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	// "${a${suffix}}": the inner variable expands first (to ""), then ${a}.
	v, _ := c.Get("inner")
	require.Equal(t, "A", v)
	v, _ = c.Get("sys")
	require.True(t, strings.HasPrefix(v, "/tmp/hadoop-") && !strings.Contains(v, "$"), v)
}

func TestFinalAndOverride(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"core-site.xml": siteXML("x", "core", "locked!", "core", "fs.default.name", "hdfs://old:9000"),
		"hdfs-site.xml": siteXML("x", "hdfs", "locked", "hdfs"),
		"yarn-site.xml": siteXML("x", "yarn", "locked", "yarn", "y", "only-yarn"),
	})
	c, err := LoadDir(dir)
	require.NoError(t, err)
	require.Len(t, c.Files(), 3)

	v, _ := c.Get("x")
	require.Equal(t, "yarn", v, "later files override")
	require.Contains(t, c.Source("x"), "yarn-site.xml")
	v, _ = c.Get("locked")
	require.Equal(t, "core", v, "final survives later files")
	require.True(t, c.IsFinal("locked"))
	v, _ = c.Get(KeyDefaultFS)
	require.Equal(t, "hdfs://old:9000", v, "deprecated fs.default.name counts")

	c.Set("locked", "code")
	v, _ = c.Get("locked")
	require.Equal(t, "code", v, "programmatic Set beats final")
}

func TestAttributeFormAndOddities(t *testing.T) {
	c := New(envOf())
	require.NoError(t, c.AddXML("attr.xml", strings.NewReader(`<configuration>
  <property name="a" value="1" final="true"/>
  <property><name>novalue</name></property>
  <property><value>noname</value></property>
  <property><name>emptyvalue</name><value/></property>
  <include xmlns="http://www.w3.org/2001/XInclude" href="other.xml"/>
</configuration>`)))
	v, ok := c.Get("a")
	require.True(t, ok)
	require.Equal(t, "1", v)
	require.True(t, c.IsFinal("a"))
	_, ok = c.Get("novalue")
	require.False(t, ok)
	v, ok = c.Get("emptyvalue")
	require.True(t, ok)
	require.Equal(t, "", v)
}

func TestTypedGetters(t *testing.T) {
	c := confOf(t, envOf(),
		"int", " 42 ", "hex", "0x1F", "neg", "-7", "badint", "4x",
		"t", "TRUE", "f", "false", "badbool", "yes",
		"d.plain", "1500", "d.ms", "250ms", "d.s", "30s", "d.m", "2m", "d.h", "1h", "d.d", "1d", "d.ns", "5ns", "d.us", "7us", "d.bad", "soon",
		"list", " a, b ,,c , ", "empty", "",
	)
	n, err := c.GetInt("int", 0)
	require.NoError(t, err)
	require.Equal(t, 42, n)
	n, err = c.GetInt("hex", 0)
	require.NoError(t, err)
	require.Equal(t, 31, n)
	n, err = c.GetInt("neg", 0)
	require.NoError(t, err)
	require.Equal(t, -7, n)
	n, err = c.GetInt("missing", 9)
	require.NoError(t, err)
	require.Equal(t, 9, n)
	_, err = c.GetInt("badint", 0)
	require.ErrorContains(t, err, `badint = "4x" (from test-site.xml) is not an integer`)

	b, err := c.GetBool("t", false)
	require.NoError(t, err)
	require.True(t, b)
	b, err = c.GetBool("f", true)
	require.NoError(t, err)
	require.False(t, b)
	b, err = c.GetBool("missing", true)
	require.NoError(t, err)
	require.True(t, b)
	_, err = c.GetBool("badbool", false)
	require.ErrorContains(t, err, "badbool")

	for key, want := range map[string]time.Duration{
		"d.plain": 1500 * time.Millisecond, "d.ms": 250 * time.Millisecond, "d.s": 30 * time.Second,
		"d.m": 2 * time.Minute, "d.h": time.Hour, "d.d": 24 * time.Hour, "d.ns": 5, "d.us": 7 * time.Microsecond,
		"missing": time.Minute,
	} {
		d, err := c.GetDuration(key, time.Millisecond, time.Minute)
		require.NoError(t, err, key)
		require.Equal(t, want, d, key)
	}
	_, err = c.GetDuration("d.bad", time.Second, 0)
	require.ErrorContains(t, err, "d.bad")

	require.Equal(t, []string{"a", "b", "c"}, c.GetStrings("list"))
	require.Nil(t, c.GetStrings("empty"))
	require.Nil(t, c.GetStrings("missing"))
	require.Equal(t, "dflt", c.GetDefault("missing", "dflt"))
}

func TestDefaults(t *testing.T) {
	c := New(envOf())
	for key, want := range map[string]string{
		KeyDefaultFS:                                "file:///",
		KeyAuthentication:                           "simple",
		KeyRPCProtection:                            "authentication",
		"yarn.resourcemanager.address":              "0.0.0.0:8032",
		"yarn.resourcemanager.scheduler.address":    "0.0.0.0:8030",
		"yarn.resourcemanager.webapp.address":       "0.0.0.0:8088",
		"yarn.resourcemanager.webapp.https.address": "0.0.0.0:8090",
	} {
		v, ok := c.Get(key)
		require.True(t, ok, key)
		require.Equal(t, want, v, key)
		require.False(t, c.IsSet(key))
		require.Equal(t, "default", c.Source(key))
	}
	_, ok := c.RMPrincipal()
	require.False(t, ok)
	_, ok = c.NameNodePrincipal()
	require.False(t, ok)

	// Setting only the hostname moves every derived address.
	c = confOf(t, envOf(), KeyRMHostname, "rm.example.com",
		KeyRMPrincipal, "rm/_HOST@EXAMPLE.COM", KeyNameNodePrincipal, "nn/_HOST@EXAMPLE.COM")
	v, _ := c.Get("yarn.resourcemanager.scheduler.address")
	require.Equal(t, "rm.example.com:8030", v)
	p, _ := c.RMPrincipal()
	require.Equal(t, "rm/_HOST@EXAMPLE.COM", p)
	p, _ = c.NameNodePrincipal()
	require.Equal(t, "nn/_HOST@EXAMPLE.COM", p)
}

func TestSecurity(t *testing.T) {
	tests := []struct {
		name    string
		props   []string
		secure  bool
		levels  []string
		wantErr string
	}{
		{name: "defaults", levels: []string{"authentication"}},
		{name: "kerberos", props: []string{KeyAuthentication, "Kerberos"}, secure: true, levels: []string{"authentication"}},
		{name: "privacy", props: []string{KeyRPCProtection, "privacy"}, levels: []string{"privacy"}},
		{name: "list", props: []string{KeyRPCProtection, "privacy, Integrity,authentication"},
			levels: []string{"privacy", "integrity", "authentication"}},
		{name: "bad", props: []string{KeyRPCProtection, "secret"}, wantErr: `hadoop.rpc.protection = "secret"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := confOf(t, envOf(), tt.props...)
			require.Equal(t, tt.secure, c.SecurityEnabled())
			levels, err := c.RPCProtection()
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.levels, levels)
		})
	}
}

func TestServerPrincipal(t *testing.T) {
	for _, tc := range []struct{ pattern, addr, want string }{
		{"nn/_HOST@EXAMPLE.COM", "NN1.Example.com:8020", "nn/nn1.example.com@EXAMPLE.COM"},
		{"root/_HOST@EXAMPLE.COM", "localhost:28032", "root/localhost@EXAMPLE.COM"},
		{"rm/fixed.host@R", "other:8032", "rm/fixed.host@R"},
		{"nn/_HOST", "host-a:1", "nn/host-a"},
		// Only a host component that is exactly _HOST is replaced.
		{"nn/_HOSTED@R", "host-a:1", "nn/_HOSTED@R"},
		{"_HOST/h@R", "host-a:1", "_HOST/h@R"},
		{"nn/h@_HOST", "host-a:1", "nn/h@_HOST"},
		{"nn@R/_HOST", "host-a:1", "nn@R/_HOST"},
	} {
		if got := ServerPrincipal(tc.pattern, tc.addr); got != tc.want {
			t.Errorf("ServerPrincipal(%q, %q) = %q, want %q", tc.pattern, tc.addr, got, tc.want)
		}
	}
}

func TestTokenService(t *testing.T) {
	ha := HDFSTarget{Nameservice: "ns2", Addresses: []string{"a:8020", "b:8020"}}
	if got := ha.TokenService(); got != "ha-hdfs:ns2" {
		t.Errorf("HA token service = %q", got)
	}
	one := HDFSTarget{Addresses: []string{"127.0.0.1:28020"}}
	if got := one.TokenService(); got != "127.0.0.1:28020" {
		t.Errorf("token service = %q", got)
	}
	if got := IPTokenService("localhost:8020"); got != "127.0.0.1:8020" {
		t.Errorf("IPTokenService(localhost:8020) = %q, want 127.0.0.1:8020", got)
	}
}

func TestSecurityPrincipalsMissing(t *testing.T) {
	c := confOf(t, envOf(), KeyAuthentication, "kerberos")
	if _, err := c.RMPrincipalFor("rm:8032"); err == nil || !strings.Contains(err.Error(), KeyRMPrincipal) {
		t.Errorf("RMPrincipalFor without the key: %v", err)
	}
	if _, err := c.NameNodePrincipalFor("nn:8020"); err == nil || !strings.Contains(err.Error(), KeyNameNodePrincipal) {
		t.Errorf("NameNodePrincipalFor without the key: %v", err)
	}
}

// TestExpansionErrorsPropagate: a value whose ${var} expansion fails (a
// substitution loop) is reported by every accessor that returns an error,
// naming the key and the file that set it, instead of being used raw.
func TestExpansionErrorsPropagate(t *testing.T) {
	loop := []string{"loop.a", "${loop.b}", "loop.b", "${loop.a}"}
	tests := []struct {
		name  string
		props []string
		call  func(c *Config) error
		key   string
	}{
		{name: "Lookup", props: []string{"k", "${loop.a}"}, key: "k",
			call: func(c *Config) error { _, _, err := c.Lookup("k"); return err }},
		{name: "GetInt", props: []string{"k", "${loop.a}"}, key: "k",
			call: func(c *Config) error { _, err := c.GetInt("k", 1); return err }},
		{name: "GetBool", props: []string{"k", "${loop.a}"}, key: "k",
			call: func(c *Config) error { _, err := c.GetBool("k", false); return err }},
		{name: "GetDuration", props: []string{"k", "${loop.a}"}, key: "k",
			call: func(c *Config) error { _, err := c.GetDuration("k", time.Second, 0); return err }},
		{name: "RM HA ids", props: []string{KeyRMHAEnabled, "true", KeyRMHAIDs, "${loop.a}"}, key: KeyRMHAIDs,
			call: func(c *Config) error { _, err := c.RMAddresses(RMClient); return err }},
		{name: "RM address", props: []string{"yarn.resourcemanager.address", "${loop.a}"}, key: "yarn.resourcemanager.address",
			call: func(c *Config) error { _, err := c.RMAddresses(RMClient); return err }},
		{name: "RPC protection", props: []string{KeyRPCProtection, "${loop.a}"}, key: KeyRPCProtection,
			call: func(c *Config) error { _, err := c.RPCProtection(); return err }},
		{name: "RM principal", props: []string{KeyRMPrincipal, "${loop.a}"}, key: KeyRMPrincipal,
			call: func(c *Config) error { _, err := c.RMPrincipalFor("rm:8032"); return err }},
		{name: "NameNode principal", props: []string{KeyNameNodePrincipal, "${loop.a}"}, key: KeyNameNodePrincipal,
			call: func(c *Config) error { _, err := c.NameNodePrincipalFor("nn:8020"); return err }},
		{name: "defaultFS", props: []string{KeyDefaultFS, "${loop.a}"}, key: KeyDefaultFS,
			call: func(c *Config) error { _, err := c.DefaultHDFS(); return err }},
		{name: "nameservices", props: []string{KeyDefaultFS, "hdfs://ns1", KeyNameservices, "${loop.a}"}, key: KeyNameservices,
			call: func(c *Config) error { _, err := c.DefaultHDFS(); return err }},
		{name: "HA namenodes", props: []string{KeyDefaultFS, "hdfs://ns1", KeyNameservices, "ns1", "dfs.ha.namenodes.ns1", "${loop.a}"},
			key:  "dfs.ha.namenodes.ns1",
			call: func(c *Config) error { _, err := c.DefaultHDFS(); return err }},
		{name: "namenode rpc address", props: []string{KeyDefaultFS, "hdfs://ns1", KeyNameservices, "ns1",
			"dfs.ha.namenodes.ns1", "nn1", "dfs.namenode.rpc-address.ns1.nn1", "${loop.a}"},
			key:  "dfs.namenode.rpc-address.ns1.nn1",
			call: func(c *Config) error { _, err := c.DefaultHDFS(); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := confOf(t, envOf(), append(tt.props, loop...)...)
			err := tt.call(c)
			require.Error(t, err)
			require.ErrorContains(t, err, "hadoopconf: "+tt.key+" = ")
			require.ErrorContains(t, err, "(from test-site.xml)")
			require.ErrorContains(t, err, "depth too large")
		})
	}
}
