package hadoopconf

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"
)

// xmlProperty accepts both the element form Hadoop writes
// (<name>/<value>/<final>) and the attribute form its StAX parser also
// reads (<property name=".." value=".." final="true"/>).
type xmlProperty struct {
	Name      string  `xml:"name"`
	Value     *string `xml:"value"`
	Final     string  `xml:"final"`
	NameAttr  string  `xml:"name,attr"`
	ValueAttr *string `xml:"value,attr"`
	FinalAttr string  `xml:"final,attr"`
}

type xmlConfiguration struct {
	XMLName    xml.Name
	Properties []xmlProperty `xml:"property"`
}

// AddFile loads one XML resource on top of what is already loaded.
func (c *Config) AddFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("hadoopconf: %w", err)
	}
	defer f.Close()
	if err := c.AddXML(path, f); err != nil {
		return err
	}
	return nil
}

// AddXML loads one XML resource from r; name is used in errors and Source.
func (c *Config) AddXML(name string, r io.Reader) error {
	var doc xmlConfiguration
	if err := xml.NewDecoder(r).Decode(&doc); err != nil {
		if err == io.EOF {
			return fmt.Errorf("hadoopconf: %s: empty file, expected <configuration>", name)
		}
		return fmt.Errorf("hadoopconf: %s: malformed XML: %w", name, err)
	}
	if doc.XMLName.Local != "configuration" {
		return fmt.Errorf("hadoopconf: %s: top-level element is <%s>, expected <configuration>", name, doc.XMLName.Local)
	}
	for _, p := range doc.Properties {
		key := strings.TrimSpace(firstNonEmpty(p.Name, p.NameAttr))
		value := p.Value
		if value == nil {
			value = p.ValueAttr
		}
		if key == "" || value == nil {
			// Hadoop drops properties without a name or a value.
			continue
		}
		final := strings.EqualFold(strings.TrimSpace(firstNonEmpty(p.Final, p.FinalAttr)), "true")
		if newKey, ok := deprecatedKeys[key]; ok {
			key = newKey
		}
		c.set(key, strings.TrimSpace(*value), final, name)
	}
	c.files = append(c.files, name)
	return nil
}

func firstNonEmpty(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}
