package hadoopconf

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// connectAddr turns a configured host[:port] (or scheme://host:port) into a
// host:port to dial, adding defPort when the port is missing.
//
// A wildcard host is mapped to localhost: 0.0.0.0 is what a server binds to,
// and yarn-default.xml's yarn.resourcemanager.hostname is 0.0.0.0, so an
// unconfigured client would otherwise try to dial the wildcard. Java clients
// get away with it because connecting to 0.0.0.0 reaches the local host on
// Linux; saying localhost makes that explicit, portable, and readable in
// error messages.
func connectAddr(value string, defPort int, key string) (string, error) {
	v := strings.TrimSpace(value)
	if i := strings.Index(v, "://"); i >= 0 {
		u, err := url.Parse(v)
		if err != nil {
			return "", fmt.Errorf("hadoopconf: %s = %q is not host:port: %w", key, value, err)
		}
		v = u.Host
	}
	if v == "" {
		return "", fmt.Errorf("hadoopconf: %s is empty, expected host:port", key)
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		// No port (or a bare IPv6 literal): use the service's default port.
		host, port = strings.Trim(v, "[]"), strconv.Itoa(defPort)
	}
	if host == "" {
		return "", fmt.Errorf("hadoopconf: %s = %q has no host", key, value)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", fmt.Errorf("hadoopconf: %s = %q has bad port %q", key, value, port)
	}
	if host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return net.JoinHostPort(host, port), nil
}
