// Package report writes a pipeline run's results for people and for CI
// systems, all into one folder: summary.txt (kernel x stage), junit.xml,
// kcidb.json (KernelCI's KCIDB schema v5.3), check-<kernel>.sarif,
// build-<kernel>-<variant>.json, console-<kernel>-<variant>.log and
// result.json.
package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/patchctl/patchctl/internal/pipeline"
)

// Origin is patchctl's KCIDB origin.
const Origin = "patchctl"

// Write writes every report into dir and returns the files written.
func Write(dir string, res *pipeline.Result, version string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	put := func(name string, write func(io.Writer) error) error {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", name, err)
		}
		files = append(files, p)
		return f.Close()
	}
	if err := put("summary.txt", func(w io.Writer) error { Summary(w, res); return nil }); err != nil {
		return nil, err
	}
	if err := put("junit.xml", func(w io.Writer) error { return JUnit(w, res) }); err != nil {
		return nil, err
	}
	if err := put("kcidb.json", func(w io.Writer) error { return KCIDB(w, res, dir) }); err != nil {
		return nil, err
	}
	if err := put("result.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}); err != nil {
		return nil, err
	}
	for _, k := range res.Kernels {
		if k.Check != nil {
			if err := put("check-"+k.Name+".sarif", func(w io.Writer) error { return k.Check.WriteSARIF(w, version) }); err != nil {
				return nil, err
			}
		}
		for v, b := range k.Builds {
			b := b
			if err := put(fmt.Sprintf("build-%s-%s.json", k.Name, v), func(w io.Writer) error {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			}); err != nil {
				return nil, err
			}
		}
		for v, bt := range k.Boots {
			if data, err := os.ReadFile(bt.ConsoleLog); err == nil {
				if err := put(fmt.Sprintf("console-%s-%s.log", k.Name, v), func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
					return nil, err
				}
			}
		}
	}
	return files, nil
}

// Summary prints the kernel x stage table and the verdict.
func Summary(w io.Writer, res *pipeline.Result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var stages []string
	if len(res.Kernels) > 0 {
		for _, s := range res.Kernels[0].Stages {
			stages = append(stages, s.Name)
		}
	}
	fmt.Fprintf(tw, "KERNEL\t%s\tVERDICT\n", strings.ToUpper(strings.Join(stages, "\t")))
	for _, k := range res.Kernels {
		var cells []string
		for _, n := range stages {
			cell := "-"
			for _, s := range k.Stages {
				if s.Name == n {
					cell = fmt.Sprintf("%s %.0fs", s.Status, s.Duration)
					if s.Reused {
						cell = s.Status + " reused"
					}
				}
			}
			cells = append(cells, cell)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Name, strings.Join(cells, "\t"), k.Verdict)
	}
	tw.Flush()
	for _, k := range res.Kernels {
		for _, s := range k.Stages {
			if s.Detail != "" {
				fmt.Fprintf(w, "%s %s: %s\n", k.Name, s.Name, s.Detail)
			}
		}
		if k.Reason != "" {
			fmt.Fprintf(w, "%s: %s because %s\n", k.Name, k.Verdict, k.Reason)
		}
	}
	fmt.Fprintf(w, "verdict: %s (%.0fs)\n", res.Verdict, res.Duration)
}

// PatchsetHash is KCIDB's: sha256 over the newline-terminated sha256 of
// each patch, in order ("" without patches).
func PatchsetHash(patches []string) (string, error) {
	if len(patches) == 0 {
		return "", nil
	}
	var b strings.Builder
	for _, p := range patches {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		s := sha256.Sum256(data)
		b.WriteString(hex.EncodeToString(s[:]) + "\n")
	}
	s := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(s[:]), nil
}
