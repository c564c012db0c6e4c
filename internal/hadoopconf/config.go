package hadoopconf

import (
	"fmt"
	"os"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is a loaded Hadoop configuration. It is safe for concurrent reads;
// Set must not race with reads.
type Config struct {
	props   map[string]string
	finals  map[string]bool
	sources map[string]string
	files   []string
	// lookupEnv resolves ${env.NAME}; injectable so tests need not touch
	// the process environment.
	lookupEnv func(string) (string, bool)
	// sysProps stands in for the Java system properties Hadoop consults
	// before configuration keys (site files often say /tmp/hadoop-${user.name}).
	sysProps map[string]string
}

// New returns an empty configuration that knows only the built-in defaults.
// ${env.NAME} is resolved from env (nil means the process environment).
func New(env func(string) (string, bool)) *Config {
	if env == nil {
		env = os.LookupEnv
	}
	return &Config{
		props:     map[string]string{},
		finals:    map[string]bool{},
		sources:   map[string]string{},
		lookupEnv: env,
		sysProps:  javaSystemProperties(env),
	}
}

func javaSystemProperties(env func(string) (string, bool)) map[string]string {
	p := map[string]string{"java.io.tmpdir": os.TempDir()}
	if u, err := user.Current(); err == nil {
		p["user.name"] = u.Username
		p["user.home"] = u.HomeDir
	} else if name, ok := env("USER"); ok {
		p["user.name"] = name
	}
	return p
}

// Set sets key programmatically, like Configuration.set: it overrides even
// final values, because explicit code wins over files.
func (c *Config) Set(key, value string) {
	key = strings.TrimSpace(key)
	c.props[key] = value
	c.sources[key] = "programmatically"
}

// set applies one property read from a file, honouring final.
func (c *Config) set(key, value string, final bool, source string) {
	if c.finals[key] {
		return
	}
	c.props[key] = value
	c.sources[key] = source
	if final {
		c.finals[key] = true
	}
}

// Files lists the files loaded, in load order.
func (c *Config) Files() []string { return append([]string(nil), c.files...) }

// Source names the file that set key ("default" for built-in defaults, ""
// when unset). Useful in error messages that tell users what to fix.
func (c *Config) Source(key string) string {
	if s, ok := c.sources[key]; ok {
		return s
	}
	if _, ok := defaults[key]; ok {
		return "default"
	}
	return ""
}

// IsFinal reports whether a file marked key final.
func (c *Config) IsFinal(key string) bool { return c.finals[key] }

// IsSet reports whether key was set by a file or Set (defaults don't count).
func (c *Config) IsSet(key string) bool {
	_, ok := c.props[key]
	return ok
}

// Keys returns every explicitly set key, sorted.
func (c *Config) Keys() []string {
	keys := make([]string, 0, len(c.props))
	for k := range c.props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Raw returns the unexpanded value of key, falling back to the built-in
// defaults.
func (c *Config) Raw(key string) (string, bool) {
	if v, ok := c.props[key]; ok {
		return v, true
	}
	v, ok := defaults[key]
	return v, ok
}

// Lookup returns the expanded, trimmed value of key. The error reports a
// substitution loop that exceeded Hadoop's depth limit, naming the key, its
// raw value and the file that set it.
func (c *Config) Lookup(key string) (string, bool, error) {
	raw, ok := c.Raw(key)
	if !ok {
		return "", false, nil
	}
	v, err := c.expand(raw)
	if err != nil {
		return raw, true, fmt.Errorf("hadoopconf: %s = %q (from %s) cannot be expanded: %w", key, raw, c.where(key), err)
	}
	return strings.TrimSpace(v), true, nil
}

// Get returns the expanded value of key. On a substitution loop it returns
// the raw value, which keeps the ${...} visible to whoever prints it; code
// that can report an error uses Lookup (or lookupStrings) instead.
func (c *Config) Get(key string) (string, bool) {
	v, ok, _ := c.Lookup(key)
	return v, ok
}

// GetDefault returns Get(key), or def when key is unset.
func (c *Config) GetDefault(key, def string) string {
	if v, ok := c.Get(key); ok {
		return v
	}
	return def
}

// GetInt parses key as a decimal (or 0x-prefixed hex, as Hadoop allows)
// integer, returning def when unset.
func (c *Config) GetInt(key string, def int) (int, error) {
	v, ok, err := c.Lookup(key)
	if err != nil || !ok {
		return def, err
	}
	base := 10
	digits := v
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	if strings.HasPrefix(digits, "0x") || strings.HasPrefix(digits, "0X") {
		base, digits = 16, digits[2:]
	}
	n, perr := strconv.ParseInt(digits, base, strconv.IntSize)
	if perr != nil {
		return def, c.badValue(key, v, "an integer")
	}
	if neg {
		n = -n
	}
	return int(n), nil
}

// GetBool parses key as true/false (case-insensitive), returning def when
// unset. Hadoop silently returns the default for garbage; we report it,
// because a typo in yarn.resourcemanager.ha.enabled is worth knowing about.
func (c *Config) GetBool(key string, def bool) (bool, error) {
	v, ok, err := c.Lookup(key)
	if err != nil || !ok {
		return def, err
	}
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return def, c.badValue(key, v, "true or false")
}

// GetDuration parses key like Configuration.getTimeDuration: a number with
// an optional suffix ns, us, ms, s, m, h or d; a bare number is in unit.
func (c *Config) GetDuration(key string, unit, def time.Duration) (time.Duration, error) {
	v, ok, err := c.Lookup(key)
	if err != nil || !ok {
		return def, err
	}
	d, perr := parseDuration(v, unit)
	if perr != nil {
		return def, c.badValue(key, v, "a duration such as 30s, 500ms or 10m")
	}
	return d, nil
}

var durationSuffixes = []struct {
	suffix string
	unit   time.Duration
}{
	// Longest suffixes first so "ms" is not read as "s".
	{"ns", time.Nanosecond}, {"us", time.Microsecond}, {"ms", time.Millisecond},
	{"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour},
}

func parseDuration(v string, unit time.Duration) (time.Duration, error) {
	lower := strings.ToLower(strings.TrimSpace(v))
	for _, s := range durationSuffixes {
		if strings.HasSuffix(lower, s.suffix) {
			unit, lower = s.unit, strings.TrimSpace(strings.TrimSuffix(lower, s.suffix))
			break
		}
	}
	n, err := strconv.ParseInt(lower, 10, 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(n) * unit, nil
}

// GetStrings splits key on commas, trims each part and drops empty ones
// (Configuration.getTrimmedStrings). Unset gives nil. On a substitution
// loop it splits the raw value, as Get does; lookupStrings reports it.
func (c *Config) GetStrings(key string) []string {
	v, ok := c.Get(key)
	if !ok {
		return nil
	}
	return splitList(v)
}

// lookupStrings is GetStrings with Lookup's error.
func (c *Config) lookupStrings(key string) ([]string, error) {
	v, ok, err := c.Lookup(key)
	if err != nil || !ok {
		return nil, err
	}
	return splitList(v), nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (c *Config) badValue(key, value, want string) error {
	return fmt.Errorf("hadoopconf: %s = %q (from %s) is not %s", key, value, c.where(key), want)
}

// where names the file that set key, for error messages.
func (c *Config) where(key string) string {
	if where := c.Source(key); where != "" {
		return where
	}
	return "configuration"
}
