package appmaster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// A LinuxContainerExecutor NodeManager whose allowed runtimes lack docker
// fails a container asked to run in an image while reading its resource
// request (ContainerImpl's RequestResourcesTransition), before anything of it
// runs: the container goes to LOCALIZATION_FAILED, the RM reports exit status
// -1000 and no diagnostics, and "Requested runtime not allowed" is only in
// the NodeManager's log, which users cannot read. The NodeManager's own
// configuration, served by its web server's /conf like every Hadoop
// daemon's, says whether that is why.
const (
	allowedRuntimesKey = "yarn.nodemanager.runtime.linux.allowed-runtimes"
	// nodeConfTimeout bounds the question: it is asked on a failure path
	// the AM's loop waits for.
	nodeConfTimeout = 5 * time.Second
	// maxNodeConfAnswer bounds what is read of the answer: one property.
	maxNodeConfAnswer = 64 << 10
)

// imageRefusalReason returns how refusalReason explains a task's container
// that YARN ended with exit status -1000 and no reason: for a task of jf
// that runs in an image, what the NodeManager's configuration says; "" for
// any other task (its ending keeps YARN's words alone).
func imageRefusalReason(jf contract.JobFile) func(context.Context, taskspec.TaskID, string) string {
	hc := &http.Client{Timeout: nodeConfTimeout}
	// One question per node and job, its answer kept whatever it was: a
	// NodeManager's configuration does not change within a job, and one
	// that did not answer in time must not stall the AM's loop (which alone
	// calls this) again for each of its other refused containers.
	said := map[string]string{}
	return func(ctx context.Context, task taskspec.TaskID, nodeHTTP string) string {
		if jf.Job.ImageFor(task.Type) == "" {
			return ""
		}
		if r, ok := said[nodeHTTP]; ok {
			return r
		}
		r := refusalReason(ctx, hc, nodeHTTP)
		said[nodeHTTP] = r
		return r
	}
}

// refusalReason explains, from the configuration of the NodeManager whose
// web server is nodeHTTP (host:port), why it refused to run a container in
// an image; when it cannot tell, it says what such a refusal usually means.
func refusalReason(ctx context.Context, hc *http.Client, nodeHTTP string) string {
	host, _, err := net.SplitHostPort(nodeHTTP)
	if err != nil {
		host = nodeHTTP
	}
	runtimes, err := nodeConf(ctx, hc, nodeHTTP, allowedRuntimesKey)
	if err == nil && !hasRuntime(runtimes, "docker") {
		return fmt.Sprintf("the NodeManager on %s refused to run the container in an image before anything of it ran: "+
			"its allowed runtimes (%s) are %q, without docker; run this task without --image, "+
			"or on NodeManagers whose administrator allows the docker runtime", host, allowedRuntimesKey, runtimes)
	}
	why := "its log says why; NodeManagers that do not allow the docker runtime refuse so"
	if err != nil {
		why += fmt.Sprintf(" (its configuration could not be read: %v)", err)
	}
	return fmt.Sprintf("the NodeManager on %s refused the container in an image before anything of it ran and gave YARN no reason: %s", host, why)
}

// hasRuntime reports whether the comma-separated list of runtimes names one.
func hasRuntime(list, runtime string) bool {
	for _, r := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(r), runtime) {
			return true
		}
	}
	return false
}

// nodeConf reads one property of a Hadoop daemon's configuration from its
// web server (GET /conf?name=KEY, the JSON form). A Kerberized daemon's
// web server wants SPNEGO, which the AM cannot do: that is an error here.
func nodeConf(ctx context.Context, hc *http.Client, hostPort, key string) (string, error) {
	u := url.URL{Scheme: "http", Host: hostPort, Path: "/conf", RawQuery: url.Values{"name": {key}}.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxNodeConfAnswer+1))
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", u.String(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", u.String(), resp.Status)
	}
	if len(body) > maxNodeConfAnswer {
		return "", fmt.Errorf("GET %s: answer longer than %d bytes", u.String(), maxNodeConfAnswer)
	}
	var answer struct {
		Property struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"property"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return "", fmt.Errorf("GET %s: not a property in JSON: %w", u.String(), err)
	}
	if answer.Property.Key != key {
		return "", fmt.Errorf("GET %s: the answer is about %q", u.String(), answer.Property.Key)
	}
	return answer.Property.Value, nil
}
