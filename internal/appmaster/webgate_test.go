package appmaster

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/reqsign"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestWebGate: the status JSON answers a signed request only (statusauth's
// tests say which); the UI answers only the proxy's address, under the
// key's path token: the owner's view to the viewer the proxy names the
// owner, the public view to every other; everyone else is sent to the
// proxy's page, without the token.
func TestWebGate(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	proxyIP := "127.0.0.1"
	g := newWebGate("alice", WebAccess{StatusKey: key, ProxyHosts: []string{"rm:8088"}, ProxyURL: "http://rm:8088/proxy/application_1_0001/", AnonymousUser: "dr.who"},
		testViews(), t.Logf)
	g.lookup = func(_ context.Context, host string) ([]string, error) {
		require.Equal(t, "rm", host)
		return []string{proxyIP}, nil
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path string, header http.Header) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		require.NoError(t, err)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Location")
	}
	ui0 := contract.ProxiedPrefix + contract.WebPathToken(key) + "/"

	code, body, _ := do("GET", contract.StatusPath, nil)
	require.Equal(t, http.StatusUnauthorized, code)
	require.NotContains(t, body, "app_id")
	signed := http.Header{}
	signStatusRequest(t, key, contract.StatusPath, signed)
	code, body, _ = do("GET", contract.StatusPath, signed)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, `{"app_id":"x"}`, body)

	for _, p := range []string{"/", "/static/page.js", "/proxied/", "/proxied/guess/", ui0[:len(ui0)-2] + "/"} {
		code, _, loc := do("GET", p, nil)
		require.Equal(t, http.StatusFound, code, p)
		require.Equal(t, "http://rm:8088/proxy/application_1_0001/", loc, p)
	}
	code, _, _ = do("POST", "/", nil)
	require.Equal(t, http.StatusNotFound, code)

	// From the proxy's address: the owner's view only to the viewer it
	// names the owner.
	for _, tc := range []struct{ cookie, page, status string }{
		{"proxy-user=alice", "page /", `{"app_id":"x"}`},
		{"proxy-user=al%69ce", "page /", `{"app_id":"x"}`},
		{"", "public page /", "public"},
		{"proxy-user=dr.who", "public page /", "public"},
		{"proxy-user=bob", "public page /", "public"},
		{"proxy-user=alice2", "public page /", "public"},
		{"other=alice", "public page /", "public"},
	} {
		h := http.Header{"Cookie": {tc.cookie}}
		code, body, _ = do("GET", ui0, h)
		require.Equal(t, http.StatusOK, code, tc.cookie)
		require.Equal(t, tc.page, body, tc.cookie)
		code, body, _ = do("GET", ui0+"status", h)
		require.Equal(t, http.StatusOK, code, tc.cookie)
		require.Equal(t, tc.status, body, tc.cookie)
	}
	code, body, _ = do("GET", ui0+"static/page.js", http.Header{"Cookie": {"proxy-user=alice"}})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "page /static/page.js", body)

	// From any other address, even with the token and the owner's name:
	// to the proxy, without the token.
	g.mu.Lock()
	g.proxies = nil
	g.mu.Unlock()
	proxyIP = "10.1.2.3"
	code, _, loc := do("GET", ui0+"static/page.js?x=1", http.Header{"Cookie": {"proxy-user=alice"}})
	require.Equal(t, http.StatusFound, code)
	require.Equal(t, "http://rm:8088/proxy/application_1_0001/static/page.js?x=1", loc)
	require.False(t, strings.Contains(loc, contract.WebPathToken(key)))
	code, _, _ = do("GET", ui0+"status", nil)
	require.Equal(t, http.StatusFound, code)
}

// TestWebGateAnonymousOwner: a job whose owner has the name the
// ResourceManager gives viewers it did not authenticate shows every
// viewer the public view.
func TestWebGateAnonymousOwner(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	g := newWebGate("dr.who", WebAccess{StatusKey: key, ProxyHosts: []string{"rm"}, AnonymousUser: "dr.who"}, testViews(), t.Logf)
	g.lookup = func(context.Context, string) ([]string, error) { return []string{"127.0.0.1"}, nil }
	r := httptest.NewRequest(http.MethodGet, contract.ProxiedPrefix+contract.WebPathToken(key)+"/status", nil)
	r.RemoteAddr = "127.0.0.1:4000"
	r.Header.Set("Cookie", "proxy-user=dr.who")
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)
	require.Equal(t, "public", w.Body.String())
}

// testViews answer what they are: the owner's JSON and page, and the
// public ones.
func testViews() webViews {
	text := func(s string, path bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			out := s
			if path {
				out += " " + r.URL.Path
			}
			_, _ = io.WriteString(w, out)
		})
	}
	return webViews{status: text(`{"app_id":"x"}`, false), ui: text("page", true), publicStatus: text("public", false), publicUI: text("public page", true)}
}

// TestWebAccessFor: the proxies are AmFilterInitializer's: a separate web
// proxy when configured, else every ResourceManager's web address.
func TestWebAccessFor(t *testing.T) {
	conf := func(kv ...string) *hadoopconf.Config {
		c := hadoopconf.New(func(string) (string, bool) { return "", false })
		for i := 0; i < len(kv); i += 2 {
			c.Set(kv[i], kv[i+1])
		}
		return c
	}
	key := []byte("0123456789abcdef")
	a, err := WebAccessFor(conf("yarn.resourcemanager.hostname", "rm1.example"), "application_1_0002", key)
	require.NoError(t, err)
	require.Equal(t, []string{"rm1.example:8088"}, a.ProxyHosts)
	require.Equal(t, "http://rm1.example:8088/proxy/application_1_0002/", a.ProxyURL)
	require.Equal(t, "dr.who", a.AnonymousUser)

	// A site file binding the web UI everywhere: the proxy connects from the RM's host name.
	a, err = WebAccessFor(conf("yarn.resourcemanager.hostname", "rm1.example", "yarn.resourcemanager.webapp.address", "0.0.0.0:8088"), "application_1_0002", key)
	require.NoError(t, err)
	require.Equal(t, []string{"rm1.example:8088"}, a.ProxyHosts)

	a, err = WebAccessFor(conf("yarn.web-proxy.address", "proxy.example:9046", "hadoop.http.staticuser.user", "nobody"), "application_1_0002", key)
	require.NoError(t, err)
	require.Equal(t, []string{"proxy.example:9046"}, a.ProxyHosts)
	require.Equal(t, "http://proxy.example:9046/proxy/application_1_0002/", a.ProxyURL)
	require.Equal(t, "nobody", a.AnonymousUser)

	a, err = WebAccessFor(conf("yarn.resourcemanager.ha.enabled", "true", "yarn.resourcemanager.ha.rm-ids", "rm1,rm2",
		"yarn.resourcemanager.hostname.rm1", "a.example", "yarn.resourcemanager.hostname.rm2", "b.example", "yarn.http.policy", "HTTPS_ONLY"), "application_1_0002", key)
	require.NoError(t, err)
	require.Equal(t, []string{"a.example:8090", "b.example:8090"}, a.ProxyHosts)
	require.Equal(t, "https://a.example:8090/proxy/application_1_0002/", a.ProxyURL)
}

// TestRendezvousBindsHost: the AM's listener binds its NodeManager's host
// address, not every interface; a host name that does not bind here falls
// back to every interface.
func TestRendezvousBindsHost(t *testing.T) {
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 1, Resources: taskspec.Resources{VCores: 1}}}, Command: "true"}
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	for _, tc := range []struct{ host, want string }{{"127.0.0.1", "127.0.0.1"}, {"tfyarn-no-such-host.invalid", "::"}} {
		rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0003", Job: job, Secret: secret, Host: tc.host})
		require.NoError(t, err)
		ip := rv.ln.Addr().(*net.TCPAddr).IP
		rv.Close(0)
		if tc.want == "::" {
			require.True(t, ip.IsUnspecified(), "%s: %s", tc.host, ip)
		} else {
			require.Equal(t, tc.want, ip.String(), tc.host)
		}
	}
}

// TestTaskTokensWithoutStatusKey: the status key is the owner's proof
// towards the AM; the tasks' credentials never carry it.
func TestTaskTokensWithoutStatusKey(t *testing.T) {
	creds := security.NewCredentials()
	creds.AddSecret(contract.StatusKeyAlias, []byte("0123456789abcdef0123456789abcdef"))
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	got, err := security.ParseCredentials(TaskTokens(creds, secret))
	require.NoError(t, err)
	require.Equal(t, []string{rendezvous.SecretAlias}, got.SecretAliases())
	_, still := creds.Secret(contract.StatusKeyAlias)
	require.True(t, still, "the AM keeps its own")
}

// FuzzWebGate: whatever path, signature headers and cookies a request
// carries, the gate answers only a request signed with the key at
// StatusPath, or the proxy's address under the key's token: with the
// owner's view only when the proxy names the owner.
func FuzzWebGate(f *testing.F) {
	key := []byte("0123456789abcdef0123456789abcdef")
	token := contract.WebPathToken(key)
	f.Add("/status", "", "", "", true)
	f.Add("/status", "1700000000000", "00112233445566778899aabbccddeeff", "", true)
	f.Add("/proxied/"+token+"/", "", "", "proxy-user=alice", true)
	f.Add("/proxied/"+token+"/status", "", "", "proxy-user=bob", true)
	f.Add("/proxied/"+token+"/../status", "", "", "proxy-user=%62ob", false)
	f.Add("/proxied//"+token+"/", "x", "", "proxy-user=; proxy-user=alice", true)
	f.Add("/proxied/"+token+"/"+token, "", "", "", false)
	g := newWebGate("alice", WebAccess{StatusKey: key, ProxyHosts: []string{"rm"}, ProxyURL: "http://rm:8088/proxy/application_1_0001/", AnonymousUser: "dr.who"},
		testViews(), func(string, ...any) {})
	g.lookup = func(context.Context, string) ([]string, error) { return []string{"127.0.0.1"}, nil }
	f.Fuzz(func(t *testing.T, path, timestamp, nonce, cookie string, fromProxy bool) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.Path = path
		r.RequestURI = path
		r.RemoteAddr = "10.0.0.9:4000"
		if fromProxy {
			r.RemoteAddr = "127.0.0.1:4000"
		}
		// Signature headers of the right form, with whatever values.
		r.Header.Set(reqsign.HeaderSigner, "application_1_0001")
		r.Header.Set(reqsign.HeaderTimestamp, timestamp)
		r.Header.Set(reqsign.HeaderNonce, nonce)
		r.Header.Set(reqsign.HeaderContentSHA256, reqsign.Digest(nil))
		r.Header.Set(reqsign.HeaderSignature, strings.Repeat("ab", 32))
		r.Header.Set("Cookie", cookie)
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		body := w.Body.String()
		if w.Code != http.StatusOK {
			require.NotContains(t, body, "app_id")
			require.NotContains(t, body, "page")
			if !strings.Contains(path, token) && !strings.Contains(r.URL.RawQuery, token) {
				require.NotContains(t, w.Header().Get("Location"), token, "a redirect gives the token away")
			}
			return
		}
		require.NotEqual(t, contract.StatusPath, path, "a forged signature was served")
		require.True(t, fromProxy, "%q served to a stranger", path)
		require.True(t, strings.HasPrefix(path, "/proxied/"+token+"/"), "%q served", path)
		if u, named := proxyUser(r); !named || u != "alice" {
			require.True(t, strings.HasPrefix(body, "public"), "the owner's view for %q", cookie)
		}
	})
}
