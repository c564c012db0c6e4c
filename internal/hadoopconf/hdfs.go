package hadoopconf

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// DefaultNameNodePort is the NameNode RPC port when an hdfs:// URI has none.
const DefaultNameNodePort = 8020

// HDFSTarget says where the NameNodes of one hdfs:// filesystem are.
type HDFSTarget struct {
	// URI is the filesystem URI as configured, e.g. hdfs://ns1.
	URI string
	// Nameservice is the logical name for an HA (or federated) nameservice;
	// empty when the URI names a host directly.
	Nameservice string
	// NameNodeIDs are dfs.ha.namenodes.<ns> in order, parallel to Addresses;
	// empty without HA.
	NameNodeIDs []string
	// Addresses are NameNode RPC host:port, in configured failover order.
	Addresses []string
}

// DefaultFS returns fs.defaultFS (default file:///) parsed.
func (c *Config) DefaultFS() (*url.URL, error) {
	v, _, err := c.Lookup(KeyDefaultFS)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("hadoopconf: %s = %q is not a URI: %w", KeyDefaultFS, v, err)
	}
	return u, nil
}

// DefaultHDFS resolves the NameNodes of fs.defaultFS, which must be hdfs://.
func (c *Config) DefaultHDFS() (HDFSTarget, error) {
	u, err := c.DefaultFS()
	if err != nil {
		return HDFSTarget{}, err
	}
	if u.Scheme != "hdfs" {
		return HDFSTarget{}, fmt.Errorf("hadoopconf: %s is %q, not an hdfs:// URI; set it in core-site.xml (from %s)",
			KeyDefaultFS, u.String(), c.Source(KeyDefaultFS))
	}
	return c.HDFS(u.String())
}

// HDFS resolves the NameNodes of an hdfs://authority URI. An authority with
// a port is a single NameNode; one without is a nameservice when
// dfs.nameservices lists it or dfs.ha.namenodes.<it> is set, else a host on
// the default port.
func (c *Config) HDFS(uri string) (HDFSTarget, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "hdfs" || u.Host == "" {
		return HDFSTarget{}, fmt.Errorf("hadoopconf: %q is not an hdfs://host[:port] URI", uri)
	}
	t := HDFSTarget{URI: uri}
	isNS := false
	if u.Port() == "" {
		if isNS, err = c.isNameservice(u.Host); err != nil {
			return HDFSTarget{}, err
		}
	}
	if !isNS {
		a, err := connectAddr(u.Host, DefaultNameNodePort, uri)
		if err != nil {
			return HDFSTarget{}, err
		}
		t.Addresses = []string{a}
		return t, nil
	}
	ns := u.Host
	t.Nameservice = ns
	nns, err := c.lookupStrings(KeyHANameNodesPrefix + ns)
	if err != nil {
		return HDFSTarget{}, err
	}
	if len(nns) == 0 {
		// A non-HA nameservice (federation): one rpc-address.<ns>.
		key := KeyNameNodeRPCAddress + "." + ns
		a, err := c.requiredAddr(key, fmt.Sprintf("nameservice %q has no NameNodes: set %s%s or %s", ns, KeyHANameNodesPrefix, ns, key))
		if err != nil {
			return HDFSTarget{}, err
		}
		t.Addresses = []string{a}
		return t, nil
	}
	for _, nn := range nns {
		key := KeyNameNodeRPCAddress + "." + ns + "." + nn
		a, err := c.requiredAddr(key, fmt.Sprintf("NameNode %q of nameservice %q has no address: set %s", nn, ns, key))
		if err != nil {
			return HDFSTarget{}, err
		}
		t.NameNodeIDs = append(t.NameNodeIDs, nn)
		t.Addresses = append(t.Addresses, a)
	}
	return t, nil
}

func (c *Config) isNameservice(name string) (bool, error) {
	nss, err := c.lookupStrings(KeyNameservices)
	if err != nil {
		return false, err
	}
	if slices.Contains(nss, name) {
		return true, nil
	}
	_, ok := c.Raw(KeyHANameNodesPrefix + name)
	return ok, nil
}

func (c *Config) requiredAddr(key, missing string) (string, error) {
	v, ok, err := c.Lookup(key)
	if err != nil {
		return "", err
	}
	if !ok || strings.TrimSpace(v) == "" {
		return "", fmt.Errorf("hadoopconf: %s", missing)
	}
	return connectAddr(v, DefaultNameNodePort, key)
}

// NameNodePrincipal returns dfs.namenode.kerberos.principal (may contain _HOST).
func (c *Config) NameNodePrincipal() (string, bool) { return c.Get(KeyNameNodePrincipal) }
