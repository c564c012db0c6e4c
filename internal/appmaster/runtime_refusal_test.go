package appmaster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A NodeManager's /conf answer (Hadoop 3.4's ConfServlet, JSON) decides
// what a refused container in an image is told.
func TestRefusalReason(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request)
		want   string
	}{
		{"runtimes without docker", confAnswer(allowedRuntimesKey, "default"),
			`its allowed runtimes (yarn.nodemanager.runtime.linux.allowed-runtimes) are "default", without docker; run this task without --image`},
		{"docker allowed: another reason", confAnswer(allowedRuntimesKey, "default, Docker"),
			"gave YARN no reason: its log says why; NodeManagers that do not allow the docker runtime refuse so"},
		{"SPNEGO wanted", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "auth", http.StatusUnauthorized) },
			"its configuration could not be read: GET http://"},
		{"another property", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"property":{"key":"yarn.nodemanager.local-dirs","value":"/x"}}`)
		}, `the answer is about "yarn.nodemanager.local-dirs"`},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<configuration/>") }, "not a property in JSON"},
		{"endless answer", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"property":{"key":"`+strings.Repeat("x", 2*maxNodeConfAnswer)+`"}}`)
		}, "answer longer than 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tc.answer))
			defer srv.Close()
			got := refusalReason(context.Background(), srv.Client(), strings.TrimPrefix(srv.URL, "http://"))
			require.Contains(t, got, "the NodeManager on 127.0.0.1 ")
			require.Contains(t, got, tc.want)
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		addr := strings.TrimPrefix(srv.URL, "http://")
		srv.Close()
		got := refusalReason(context.Background(), http.DefaultClient, addr)
		require.Contains(t, got, "gave YARN no reason")
		require.Contains(t, got, "could not be read")
	})
}

func confAnswer(key, value string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/conf" || r.URL.Query().Get("name") != key || r.Header.Get("Accept") != "application/json" {
			fmt.Fprintf(w, `{"property":{"key":%q,"value":"?"}}`, r.URL.Query().Get("name"))
			return
		}
		fmt.Fprintf(w, `{"property":{"key":%q,"value":%q,"isFinal":false,"resource":"yarn-default.xml"}}`, key, value)
	}
}
