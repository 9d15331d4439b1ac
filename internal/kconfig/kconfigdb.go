package kconfig

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// DB is what the tree's Kconfig files say about each symbol's
// dependencies: its own "depends on" lines and those of the if/menu blocks
// around it in its file.
type DB struct {
	Symbols map[string]*Symbol
}

// Symbol is one "config X" entry (the first definition found).
type Symbol struct {
	Name    string
	File    string
	Line    int
	Depends []string // expressions, all must hold
}

// DependsOn joins the dependency expressions.
func (s *Symbol) DependsOn() string {
	var parts []string
	for _, d := range s.Depends {
		if strings.ContainsAny(d, "|") && len(s.Depends) > 1 {
			d = "(" + d + ")"
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, " && ")
}

var symRef = regexp.MustCompile(`\b[A-Z][A-Z0-9_]*\b`)

// DependSymbols are the symbols its dependencies name, once each.
func (s *Symbol) DependSymbols() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range s.Depends {
		for _, r := range symRef.FindAllString(d, -1) {
			if !seen[r] && r != "y" && r != "n" && r != "m" {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.Strings(out)
	return out
}

var (
	configLine  = regexp.MustCompile(`^\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*$`)
	dependsLine = regexp.MustCompile(`^\s*depends\s+on\s+(.+?)\s*$`)
	ifLine      = regexp.MustCompile(`^\s*if\s+(.+?)\s*$`)
	endifLine   = regexp.MustCompile(`^\s*endif\b`)
	menuLine    = regexp.MustCompile(`^\s*menu\s+"`)
	endmenuLine = regexp.MustCompile(`^\s*endmenu\b`)
	helpLine    = regexp.MustCompile(`^\s*(---)?\s*help\s*(---)?\s*$`)
)

// LoadDB reads every Kconfig file under the tree. arch/ is read only for
// arch (e.g. "x86").
func LoadDB(tree, arch string) (*DB, error) {
	db := &DB{Symbols: map[string]*Symbol{}}
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		if d.IsDir() {
			if strings.HasPrefix(rel, "arch"+string(filepath.Separator)) && strings.Count(rel, string(filepath.Separator)) == 1 && filepath.Base(rel) != arch {
				return filepath.SkipDir
			}
			switch rel {
			case "Documentation", "tools", "scripts", "samples", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), "Kconfig") {
			return db.readFile(p, rel)
		}
		return nil
	})
	return db, err
}

// readFile reads one Kconfig file, keeping a stack of the if/menu
// conditions that enclose each entry.
func (db *DB) readFile(path, rel string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	type block struct {
		cond   string
		isMenu bool
	}
	var stack []block
	var cur *Symbol
	inHelp := false
	helpIndent := -1
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if inHelp {
			trimmed := strings.TrimLeft(line, " \t")
			indent := len(line) - len(trimmed)
			if trimmed == "" {
				continue
			}
			if helpIndent < 0 {
				helpIndent = indent
			}
			if indent >= helpIndent && indent > 0 {
				continue
			}
			inHelp = false
		}
		switch {
		case helpLine.MatchString(line):
			inHelp, helpIndent = true, -1
		case configLine.MatchString(line):
			name := configLine.FindStringSubmatch(line)[1]
			cur = nil
			if _, ok := db.Symbols[name]; !ok {
				cur = &Symbol{Name: name, File: rel, Line: n}
				for _, b := range stack {
					if b.cond != "" {
						cur.Depends = append(cur.Depends, b.cond)
					}
				}
				db.Symbols[name] = cur
			}
		case dependsLine.MatchString(line):
			expr := dependsLine.FindStringSubmatch(line)[1]
			if cur != nil {
				cur.Depends = append(cur.Depends, expr)
			} else if len(stack) > 0 && stack[len(stack)-1].isMenu && stack[len(stack)-1].cond == "" {
				stack[len(stack)-1].cond = expr // menu "..." depends on
			}
		case menuLine.MatchString(line):
			cur = nil
			stack = append(stack, block{isMenu: true})
		case endmenuLine.MatchString(line):
			cur = nil
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ifLine.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "if_"):
			cur = nil
			stack = append(stack, block{cond: ifLine.FindStringSubmatch(line)[1]})
		case endifLine.MatchString(line):
			cur = nil
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case strings.HasPrefix(strings.TrimSpace(line), "choice"), strings.HasPrefix(strings.TrimSpace(line), "comment"), strings.HasPrefix(strings.TrimSpace(line), "source"):
			cur = nil
		}
	}
	return sc.Err()
}
