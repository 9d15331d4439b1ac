package series

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// Record replaces the entries of series name in the manifest at path with
// entries, appended at the end of its patches list, and keeps every other
// line (comments, other entries, boot) as written. The result is checked
// with Load before it replaces the file.
func Record(path, name string, entries []Entry) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading manifest: %w: %w", err, errs.ErrInput)
	}
	text, err := recordText(string(data), name, entries)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), ".manifest.yaml.tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	if _, err := Load(tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("the recorded manifest does not load (left %s as it was): %w", path, err)
	}
	return os.Rename(tmp, path)
}

func recordText(text, name string, entries []Entry) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	top := func(l string) bool {
		t := strings.TrimRight(l, "\r\n")
		return t != "" && t[0] != ' ' && t[0] != '\t' && t[0] != '#' && t[0] != '-'
	}
	start := -1
	for i, l := range lines {
		if top(l) && strings.HasPrefix(l, "patches:") {
			start = i
			break
		}
	}
	if start < 0 {
		lines = append(lines, "patches:\n")
		start = len(lines) - 1
	}
	if v := strings.TrimSpace(strings.TrimPrefix(strings.TrimRight(lines[start], "\r\n"), "patches:")); v == "[]" {
		lines[start] = "patches:\n"
	} else if v != "" && !strings.HasPrefix(v, "#") {
		return "", fmt.Errorf("patches: is written inline (%q); record needs a block list: %w", v, errs.ErrInput)
	}
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		if top(lines[i]) {
			end = i
			break
		}
	}
	// The block's own lines; comments and blank lines just above the next
	// key belong to that key.
	blockEnd := end
	for blockEnd > start+1 {
		t := strings.TrimSpace(lines[blockEnd-1])
		if t == "" || strings.HasPrefix(t, "#") {
			blockEnd--
			continue
		}
		break
	}
	// Split the block into items: each starts at a "- " line with the
	// list's indent.
	var kept []string
	var item []string
	indent := ""
	flush := func() {
		drop := false
		for _, l := range item {
			if strings.Contains(l, "source: patches/"+name+"/") {
				drop = true
			}
		}
		if !drop {
			kept = append(kept, item...)
		}
		item = nil
	}
	for _, l := range lines[start+1 : blockEnd] {
		t := strings.TrimLeft(l, " ")
		if strings.HasPrefix(t, "- ") && (indent == "" || l[:len(l)-len(t)] == indent) {
			if indent == "" {
				indent = l[:len(l)-len(t)]
			}
			flush()
		}
		item = append(item, l)
	}
	flush()
	if indent == "" {
		indent = "  "
	}
	var add []string
	for _, e := range entries {
		if err := fsutil.ValidRel(e.Source); err != nil {
			return "", fmt.Errorf("source %s: %v: %w", e.Source, err, errs.ErrInput)
		}
		add = append(add, fmt.Sprintf("%s- source: %s\n", indent, e.Source))
		add = append(add, fmt.Sprintf("%s  expect: %s\n", indent, e.Expect))
		if e.Reason != "" {
			add = append(add, fmt.Sprintf("%s  reason: %s\n", indent, strconv.Quote(e.Reason)))
		}
		if len(e.Trailers) > 0 {
			add = append(add, indent+"  trailers:\n")
			for _, tr := range e.Trailers {
				add = append(add, fmt.Sprintf("%s    - %s\n", indent, strconv.Quote(tr)))
			}
		}
	}
	out := append([]string{}, lines[:start+1]...)
	out = append(out, kept...)
	out = append(out, add...)
	out = append(out, lines[blockEnd:]...)
	return strings.Join(out, ""), nil
}
