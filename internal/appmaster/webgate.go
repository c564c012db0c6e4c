package appmaster

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/refusals"
)

// WebAccess says who may read the AM's status JSON and web UI, whose
// owner's view shows the command line, diagnostics with stderr tails and
// every task's address.
type WebAccess struct {
	// StatusKey is the job's status key (contract.StatusKeyAlias): the
	// client proves it holds it at contract.StatusPath, and the web UI's
	// path derives from it. Nil: a random key, so no client can read the
	// JSON directly.
	StatusKey []byte
	// ProxyHosts are the ResourceManager web proxies' hosts (host or
	// host:port, as yarn.web-proxy.address or the RMs' webapp addresses
	// name them): the web UI answers requests from their addresses only,
	// the way YARN's AmIpFilter does.
	ProxyHosts []string
	// ProxyURL is the application's page on the proxy
	// (http://rm:8088/proxy/<app>/), where everyone else is sent.
	ProxyURL string
	// AnonymousUser is the name the ResourceManager's web server gives
	// viewers it did not authenticate (hadoop.http.staticuser.user); the
	// proxy passes the viewer's name in its proxy-user cookie, and a
	// viewer of this name never gets the owner's view.
	AnonymousUser string
}

// WebAccessFor reads the proxies from the cluster's configuration the way
// Hadoop's AmFilterInitializer does: yarn.web-proxy.address when a
// separate proxy runs, else every ResourceManager's web address, HTTPS
// under yarn.http.policy=HTTPS_ONLY.
func WebAccessFor(conf *hadoopconf.Config, appID string, key []byte) (WebAccess, error) {
	a := WebAccess{StatusKey: key, AnonymousUser: conf.GetDefault("hadoop.http.staticuser.user", "dr.who")}
	scheme, svc := "http://", hadoopconf.RMWebapp
	if strings.EqualFold(conf.GetDefault("yarn.http.policy", "HTTP_ONLY"), "HTTPS_ONLY") {
		scheme, svc = "https://", hadoopconf.RMWebappHTTPS
	}
	if p, ok, err := conf.Lookup("yarn.web-proxy.address"); err != nil {
		return a, err
	} else if ok && strings.TrimSpace(p) != "" {
		a.ProxyHosts = []string{strings.TrimSpace(p)}
	} else if a.ProxyHosts, err = conf.RMAddresses(svc); err != nil {
		return a, err
	} else if h := wildcardRMWeb(conf, svc); h != "" {
		a.ProxyHosts = []string{h}
	}
	a.ProxyURL = scheme + a.ProxyHosts[0] + "/proxy/" + appID + "/"
	return a, nil
}

// wildcardRMWeb is the ResourceManager's web address when, without HA,
// its configured address binds every interface (0.0.0.0:8088, common in
// site files): the proxy then connects from yarn.resourcemanager.hostname,
// not from this host's loopback, which is what the wildcard would resolve
// to here. "" otherwise.
func wildcardRMWeb(conf *hadoopconf.Config, svc hadoopconf.RMService) string {
	if ha, _ := conf.RMHAEnabled(); ha {
		return ""
	}
	raw, _, err := conf.Lookup(svc.Key())
	if err != nil {
		return ""
	}
	host, port, err := net.SplitHostPort(strings.TrimSpace(raw))
	if err != nil || (host != "0.0.0.0" && host != "::" && host != "") {
		return ""
	}
	rm, ok, err := conf.Lookup(hadoopconf.KeyRMHostname)
	if err != nil || !ok || rm == "" || rm == "0.0.0.0" || rm == "::" {
		return ""
	}
	return net.JoinHostPort(rm, port)
}

// proxyAddrRefresh is how long resolved proxy addresses are trusted
// (AmIpFilter's five minutes).
const proxyAddrRefresh = 5 * time.Minute

// webGate fronts the status JSON and the web UI:
//   - contract.StatusPath answers a fresh request signed with the status
//     key (statusAuth), with a signed answer, and refuses every other with
//     401;
//   - the UI lives under contract.ProxiedPrefix + the key's path token,
//     the tracking URL the AM registers, and answers only requests from a
//     proxy's address: the owner's view when the proxy names the job's
//     owner as the viewer (its proxy-user cookie), the public view
//     (publicReport) to every other viewer; other peers are sent to the
//     proxy (as AmIpFilter does);
//   - every other path is sent to the proxy (GET) or not found.
type webGate struct {
	owner    string
	access   WebAccess
	uiPrefix string // /proxied/<token>/
	views    webViews
	auth     *statusAuth
	lookup   func(ctx context.Context, host string) ([]string, error)
	logf     func(format string, args ...any)
	refused  *refusals.Log // the first few refusals, then a count a minute

	mu       sync.Mutex
	proxies  map[netip.Addr]bool
	resolved time.Time
}

// webViews are the status JSON and the web UI as the job's owner sees
// them, and as everyone else does.
type webViews struct {
	status, ui             http.Handler
	publicStatus, publicUI http.Handler
}

func newWebGate(owner string, access WebAccess, views webViews, logf func(string, ...any)) *webGate {
	return &webGate{
		owner: owner, access: access,
		uiPrefix: contract.ProxiedPrefix + contract.WebPathToken(access.StatusKey) + "/",
		views:    views,
		auth:     newStatusAuth(access.StatusKey),
		lookup:   net.DefaultResolver.LookupHost,
		logf:     logf,
		refused:  refusals.New("web UI", logf),
	}
}

func (g *webGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == contract.StatusPath:
		// A refusal's reason goes back to the caller only; the log counts it.
		if err := g.auth.serve(w, r, g.views.status); err != nil {
			g.refuse(r, err.Error())
		}
	case strings.HasPrefix(r.URL.Path, g.uiPrefix):
		if !g.fromProxy(r) {
			g.toProxy(w, r, strings.TrimPrefix(r.URL.Path, g.uiPrefix))
			return
		}
		status, ui := g.views.publicStatus, g.views.publicUI
		if g.ownerViewing(r) {
			status, ui = g.views.status, g.views.ui
		}
		rest := strings.TrimPrefix(r.URL.Path, g.uiPrefix)
		if rest == strings.TrimPrefix(contract.StatusPath, "/") {
			status.ServeHTTP(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = "/"+rest, ""
		ui.ServeHTTP(w, r2)
	default:
		g.toProxy(w, r, "")
	}
}

// ownerViewing reports whether the proxy names the job's owner as the
// viewer: never the name the ResourceManager gives viewers it did not
// authenticate, even for a job of a user of that name.
func (g *webGate) ownerViewing(r *http.Request) bool {
	user, ok := proxyUser(r)
	return ok && user == g.owner && user != g.access.AnonymousUser
}

// refuse logs a refused request by its peer and reason only: its path
// may hold the page's token, its headers the status request's signature.
func (g *webGate) refuse(r *http.Request, reason string) {
	g.refused.Refuse(refusals.Refusal{Peer: r.RemoteAddr, Reason: reason})
}

// toProxy sends a browser to the application's page on the proxy; rest is
// the path below the page (never the key's token).
func (g *webGate) toProxy(w http.ResponseWriter, r *http.Request, rest string) {
	if g.access.ProxyURL == "" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		http.NotFound(w, r)
		return
	}
	target := g.access.ProxyURL + strings.TrimPrefix(rest, "/")
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, target, http.StatusFound)
}

// fromProxy reports whether the request's peer is one of the proxies'
// addresses.
func (g *webGate) fromProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return g.proxyAddrs(r.Context())[peer.Unmap()]
}

func (g *webGate) proxyAddrs(ctx context.Context) map[netip.Addr]bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.proxies != nil && time.Since(g.resolved) < proxyAddrRefresh {
		return g.proxies
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs := map[netip.Addr]bool{}
	for _, hp := range g.access.ProxyHosts {
		host := hp
		if h, _, err := net.SplitHostPort(hp); err == nil {
			host = h
		}
		ips, err := g.lookup(ctx, host)
		if err != nil {
			g.logf("web UI: cannot resolve the proxy host %s: %v", host, err)
			continue
		}
		for _, ip := range ips {
			if a, err := netip.ParseAddr(ip); err == nil {
				addrs[a.Unmap()] = true
			}
		}
	}
	if len(addrs) > 0 {
		g.proxies, g.resolved = addrs, time.Now()
	}
	return addrs
}

// proxyUser is the viewer the ResourceManager's proxy names in its
// proxy-user cookie (WebAppProxyServlet, URL-encoded), if it named one.
func proxyUser(r *http.Request) (string, bool) {
	c, err := r.Cookie("proxy-user")
	if err != nil || c.Value == "" {
		return "", false
	}
	u, err := url.QueryUnescape(c.Value)
	if err != nil {
		return c.Value, true
	}
	return u, true
}
