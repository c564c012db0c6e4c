package yarn

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

const applicationPrefix = "application_"

// ApplicationIDForm is the textual form of an application id, for messages
// that tell users what was expected.
const ApplicationIDForm = "application_<clusterTimestamp>_<sequence>, e.g. application_1700000000000_0001"

// IDError reports a malformed YARN id. It reads like os.PathError:
// `yarn: parse application id "app_1": expected application_<clusterTimestamp>_<sequence>, ...`.
type IDError struct {
	Kind  string // "application id"
	Input string
	Want  string // the expected form
}

func (e *IDError) Error() string {
	return fmt.Sprintf("yarn: parse %s %q: expected %s", e.Kind, e.Input, e.Want)
}

// ParseApplicationID parses Hadoop's ApplicationId.toString form. Like Java's
// ApplicationId.fromString it accepts any non-negative sequence number, with
// or without the %04d padding.
func ParseApplicationID(s string) (*hadoopyarn.ApplicationIdProto, error) {
	bad := &IDError{Kind: "application id", Input: s, Want: ApplicationIDForm}
	rest, ok := strings.CutPrefix(s, applicationPrefix)
	if !ok {
		return nil, bad
	}
	tsPart, seqPart, ok := strings.Cut(rest, "_")
	if !ok || !allDigits(tsPart) || !allDigits(seqPart) {
		return nil, bad
	}
	ts, err := strconv.ParseInt(tsPart, 10, 64)
	if err != nil {
		return nil, bad
	}
	seq, err := strconv.ParseInt(seqPart, 10, 32)
	if err != nil {
		return nil, bad
	}
	return &hadoopyarn.ApplicationIdProto{
		ClusterTimestamp: proto.Int64(ts),
		Id:               proto.Int32(int32(seq)),
	}, nil
}

// FormatApplicationID renders id as Hadoop does:
// application_<clusterTimestamp>_<%04d sequence>. A nil id gives "".
func FormatApplicationID(id *hadoopyarn.ApplicationIdProto) string {
	if id == nil {
		return ""
	}
	return fmt.Sprintf("%s%d_%04d", applicationPrefix, id.GetClusterTimestamp(), id.GetId())
}

// FormatNodeID renders a node id as host:port, the form yarn node -list prints.
func FormatNodeID(id *hadoopyarn.NodeIdProto) string {
	if id == nil {
		return ""
	}
	return id.GetHost() + ":" + strconv.Itoa(int(id.GetPort()))
}

// allDigits rejects signs, spaces and empty strings, which strconv would
// partly accept.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
