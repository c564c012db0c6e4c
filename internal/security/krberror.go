package security

import (
	"errors"
	"regexp"
	"strconv"

	"github.com/jcmturner/gokrb5/v8/messages"
)

// gokrb5 folds a KDC's or a server's KRB-ERROR into a krberror string; the
// code survives only in the text ("KRB Error: (37) KRB_AP_ERR_SKEW ...").
var krbErrorCodeRE = regexp.MustCompile(`KRB Error: \((\d+)\)`)

// KRBErrorCode is the Kerberos error code err carries, as a
// messages.KRBError or in gokrb5's text, and whether it carries one.
func KRBErrorCode(err error) (int32, bool) {
	var ke messages.KRBError
	if errors.As(err, &ke) {
		return ke.ErrorCode, true
	}
	m := krbErrorCodeRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, false
	}
	c, perr := strconv.ParseInt(m[1], 10, 32)
	if perr != nil {
		return 0, false
	}
	return int32(c), true
}
