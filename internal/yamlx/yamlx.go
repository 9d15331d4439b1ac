// Package yamlx reads patchctl's YAML files strictly: an unknown field
// (a typo such as "expcet:") is an error naming its line, and the lines of
// list items are known, so that a check of a value can name its line too.
package yamlx

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// Decode decodes data into v, refusing fields v does not have.
func Decode(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%v", err)
	}
	return nil
}

// ItemLines returns the line of each item of the top-level list under
// key (nil when there is none).
func ItemLines(data []byte, key string) []int {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.SequenceNode {
			var lines []int
			for _, it := range m.Content[i+1].Content {
				lines = append(lines, it.Line)
			}
			return lines
		}
	}
	return nil
}

// Line is lines[i], or 0 when unknown.
func Line(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 0
}
