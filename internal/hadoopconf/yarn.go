package hadoopconf

import "fmt"

// RMService names one of the ResourceManager's listening addresses.
type RMService int

// The ResourceManager services a client may need to reach.
const (
	RMClient          RMService = iota // ApplicationClientProtocol: yarn.resourcemanager.address
	RMScheduler                        // ApplicationMasterProtocol: yarn.resourcemanager.scheduler.address
	RMResourceTracker                  // NodeManagers: yarn.resourcemanager.resource-tracker.address
	RMAdmin                            // yarn.resourcemanager.admin.address
	RMWebapp                           // HTTP UI/REST: yarn.resourcemanager.webapp.address
	RMWebappHTTPS                      // HTTPS UI/REST: yarn.resourcemanager.webapp.https.address
)

var rmServices = [...]struct {
	key  string
	port int
}{
	RMClient:          {"yarn.resourcemanager.address", 8032},
	RMScheduler:       {"yarn.resourcemanager.scheduler.address", 8030},
	RMResourceTracker: {"yarn.resourcemanager.resource-tracker.address", 8031},
	RMAdmin:           {"yarn.resourcemanager.admin.address", 8033},
	RMWebapp:          {"yarn.resourcemanager.webapp.address", 8088},
	RMWebappHTTPS:     {"yarn.resourcemanager.webapp.https.address", 8090},
}

// Key is the configuration key of the service's address.
func (s RMService) Key() string { return rmServices[s].key }

// DefaultPort is the port used when the configured address has none.
func (s RMService) DefaultPort() int { return rmServices[s].port }

func (s RMService) String() string { return s.Key() }

// RMHAEnabled reports yarn.resourcemanager.ha.enabled.
func (c *Config) RMHAEnabled() (bool, error) { return c.GetBool(KeyRMHAEnabled, false) }

// RMIDs returns yarn.resourcemanager.ha.rm-ids in configured order.
func (c *Config) RMIDs() []string { return c.GetStrings(KeyRMHAIDs) }

// RMAddresses returns host:port of service s on every ResourceManager, in
// rm-ids order under HA (the order failover tries them), or the single
// address without HA. Per-RM addresses follow HAUtil: key.<id>, else
// yarn.resourcemanager.hostname.<id> with the service's default port.
func (c *Config) RMAddresses(s RMService) ([]string, error) {
	if s < 0 || int(s) >= len(rmServices) {
		return nil, fmt.Errorf("hadoopconf: unknown RM service %d", int(s))
	}
	ha, err := c.RMHAEnabled()
	if err != nil {
		return nil, err
	}
	if !ha {
		v, _, err := c.Lookup(s.Key())
		if err != nil {
			return nil, err
		}
		a, err := connectAddr(v, s.DefaultPort(), s.Key())
		if err != nil {
			return nil, err
		}
		return []string{a}, nil
	}
	ids, err := c.lookupStrings(KeyRMHAIDs)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("hadoopconf: %s is true but %s is empty; list the ResourceManager ids (e.g. rm1,rm2)",
			KeyRMHAEnabled, KeyRMHAIDs)
	}
	addrs := make([]string, 0, len(ids))
	for _, id := range ids {
		a, err := c.rmAddress(s, id)
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

func (c *Config) rmAddress(s RMService, id string) (string, error) {
	key := s.Key() + "." + id
	if v, ok, err := c.Lookup(key); err != nil {
		return "", err
	} else if ok && v != "" {
		return connectAddr(v, s.DefaultPort(), key)
	}
	hostKey := KeyRMHostname + "." + id
	host, ok, err := c.Lookup(hostKey)
	if err != nil {
		return "", err
	}
	if !ok || host == "" {
		return "", fmt.Errorf("hadoopconf: ResourceManager %q has no address: set %s or %s", id, key, hostKey)
	}
	return connectAddr(host, s.DefaultPort(), hostKey)
}

// RMPrincipal returns yarn.resourcemanager.principal (may contain _HOST).
func (c *Config) RMPrincipal() (string, bool) { return c.Get(KeyRMPrincipal) }
