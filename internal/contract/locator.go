package contract

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// EnvAMLocator is set by an AM that allows later attempts (--am-attempts
// above 1) in every task's container: where its launcher finds the
// current AM's rendezvous address after losing the one in EnvAMAddress
// (a later attempt runs on another node, on another port). Its value is an
// AMLocator (Encode); it names files and servers, never a secret.
const EnvAMLocator = "TFYARN_AM_LOCATOR"

// AMLocator says where an AM attempt saves its rendezvous address: a JSON
// file on the job's HDFS (SavedAM), read as User with the container's
// delegation tokens, reached through the Hadoop configuration keys in Conf
// (fs.defaultFS and the dfs.* and hadoop.* keys the AM has).
type AMLocator struct {
	Path string            `json:"path"`
	User string            `json:"user"`
	Conf map[string]string `json:"conf"`
}

// SavedAM is the part of an attempt's saved state a launcher reads.
type SavedAM struct {
	AM string `json:"am"` // host:port of the rendezvous server
}

// LocatorConf picks from a configuration's keys the ones that locate and
// reach HDFS.
func LocatorConf(conf map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range conf {
		if k == "fs.defaultFS" || strings.HasPrefix(k, "dfs.") || strings.HasPrefix(k, "hadoop.") {
			out[k] = v
		}
	}
	return out
}

// Encode is the locator as EnvAMLocator's value: JSON in unpadded
// URL-safe base64, because the NodeManager's launch script pastes
// environment values between double quotes without escaping them.
func (l AMLocator) Encode() string {
	b, _ := json.Marshal(l)
	return base64.RawURLEncoding.EncodeToString(b)
}

// maxLocator bounds EnvAMLocator's value (a few configuration keys).
const maxLocator = 64 << 10

// ParseAMLocator reads EnvAMLocator's value.
func ParseAMLocator(s string) (AMLocator, error) {
	var l AMLocator
	if len(s) > maxLocator {
		return l, fmt.Errorf("%s: longer than %d bytes", EnvAMLocator, maxLocator)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return l, fmt.Errorf("%s: %w", EnvAMLocator, err)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("%s: %w", EnvAMLocator, err)
	}
	if l.Path == "" || l.User == "" {
		return l, fmt.Errorf("%s: %w", EnvAMLocator, errors.New("no path or no user"))
	}
	return l, nil
}
