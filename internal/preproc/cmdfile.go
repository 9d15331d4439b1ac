package preproc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// cmdFile is what kbuild recorded for one object: the command that
// compiled it and the source it compiled.
type cmdFile struct {
	path   string   // the .o.cmd (or .i.cmd) read
	argv   []string // the compiler command, split as the shell would
	source string   // the source file as the command names it
}

// readCmdFile reads kbuild's .<base>.o.cmd: the line
// "savedcmd_<obj> := <command>" (older kernels: "cmd_<obj> := ...") and
// "source_<obj> := <file>".
func readCmdFile(path string) (*cmdFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cf := &cmdFile{path: path}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		name, val, ok := strings.Cut(line, " := ")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(name, "savedcmd_"), strings.HasPrefix(name, "cmd_"):
			if cf.argv == nil {
				argv, err := shellSplit(val)
				if err != nil {
					return nil, fmt.Errorf("reading the command in %s: %w", path, err)
				}
				cf.argv = argv
			}
		case strings.HasPrefix(name, "source_"):
			cf.source = strings.TrimSpace(val)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(cf.argv) == 0 {
		return nil, fmt.Errorf("%s holds no savedcmd_ or cmd_ line: not a kbuild command file", path)
	}
	return cf, nil
}

// shellSplit splits a command line as sh would (quotes, backslashes) and
// stops at the first unquoted ; & | (kbuild appends objtool and other
// steps after the compiler).
func shellSplit(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' at byte %d", i)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in the command")
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == ';' || c == '&' || c == '|':
			if inWord {
				out = append(out, cur.String())
			}
			return out, nil
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// cppArgv turns a compile command into a preprocessing one: the compiler
// (without a ccache in front), its flags without the ones that write
// files or load plugins (-Wp,-MMD, -MD, -MF, -o, -c, -E, -fplugin), the
// source path last, with the tree the command was recorded for replaced
// by tree (a copy of it, or the same tree at another path).
func cppArgv(argv []string, source, recordedTree, tree string) (compiler string, flags []string, src string, err error) {
	for len(argv) > 0 && (filepath.Base(argv[0]) == "ccache" || filepath.Base(argv[0]) == "distcc" || strings.Contains(argv[0], "=")) {
		argv = argv[1:]
	}
	if len(argv) < 2 {
		return "", nil, "", fmt.Errorf("the command names no compiler and source")
	}
	re := func(a string) string {
		if recordedTree == "" || recordedTree == tree {
			return a
		}
		if a == recordedTree {
			return tree
		}
		return strings.ReplaceAll(a, recordedTree+"/", tree+"/")
	}
	compiler = argv[0]
	found := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ":
			i++
			continue
		case a == "-c" || a == "-E" || a == "-S" || a == "-MD" || a == "-MMD" || a == "-MP":
			continue
		case strings.HasPrefix(a, "-Wp,-MD,") || strings.HasPrefix(a, "-Wp,-MMD,") || strings.HasPrefix(a, "-fplugin"):
			continue
		case a == source || !strings.HasPrefix(a, "-") && (strings.HasSuffix(a, ".c") || strings.HasSuffix(a, ".S")) && !found && i == len(argv)-1:
			src = re(a)
			found = true
			continue
		}
		flags = append(flags, re(a))
	}
	if !found {
		return "", nil, "", fmt.Errorf("the command does not compile %s", source)
	}
	return compiler, flags, src, nil
}
