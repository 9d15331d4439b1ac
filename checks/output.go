package checks

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// WriteText prints findings like a compiler (file:line: rule: message,
// then the evidence), the provider table and the layouts.
func (r *Report) WriteText(w io.Writer) {
	for _, f := range r.Findings {
		sev := ""
		if f.Severity != SevError {
			sev = " [" + f.Severity + "]"
		}
		fmt.Fprintf(w, "%s:%d: %s: %s%s\n", f.File, f.Line, f.Rule, f.Message, sev)
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "    %s:%d: %s\n", e.File, e.Line, e.Message)
		}
	}
	if len(r.Providers) > 0 {
		fmt.Fprintf(w, "\ninline data the providers grant (from their source):\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  PROVIDER\tREJECTS A REQUEST ABOVE\tWRITES BACK AS GRANTED")
		for _, p := range r.Providers {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.Provider, orDash(p.Rejects), orDash(p.Grants))
		}
		tw.Flush()
	}
	for _, l := range r.Layouts {
		d := "no build with debug info"
		if l.DWARF > 0 {
			d = fmt.Sprintf("DWARF %d bytes (%s)", l.DWARF, filepath.Base(l.Object))
		}
		fmt.Fprintf(w, "%s: %d bytes by the headers, %s\n", l.Struct, l.Headers, d)
	}
	errs, warns := 0, 0
	for _, f := range r.Findings {
		switch f.Severity {
		case SevError:
			errs++
		case SevWarning:
			warns++
		}
	}
	fmt.Fprintf(w, "inline senders analysed: %s\n", strings.Join(r.Inline, ", "))
	fmt.Fprintf(w, "%d errors, %d warnings; %d files, %d functions analysed in %.1fs\n", errs, warns, r.Files, r.Functions, r.Duration)
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, "; ")
}

// WriteJSON writes {"findings": [...], ...}.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// SARIF 2.1.0 (OASIS), the subset code-scanning tools read.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
	FullDescription  sarifMessage `json:"fullDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID           string          `json:"ruleId"`
	RuleIndex        int             `json:"ruleIndex"`
	Level            string          `json:"level"`
	Message          sarifMessage    `json:"message"`
	Locations        []sarifLocation `json:"locations"`
	RelatedLocations []sarifLocation `json:"relatedLocations,omitempty"`
}

type sarifLocation struct {
	ID               int                   `json:"id,omitempty"`
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
	Message          *sarifMessage         `json:"message,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// WriteSARIF writes the findings as SARIF 2.1.0.
func (r *Report) WriteSARIF(w io.Writer, version string) error {
	ids := sortedKeys(Rules)
	index := map[string]int{}
	var rules []sarifRule
	for i, id := range ids {
		index[id] = i
		short := Rules[id]
		if i := strings.Index(short, ":"); i > 0 && i < 100 {
			short = short[:i]
		}
		rules = append(rules, sarifRule{ID: id, ShortDescription: sarifMessage{firstSentence(Rules[id])}, FullDescription: sarifMessage{Rules[id]}})
	}
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "patchctl", Version: version, Rules: rules}}, Results: []sarifResult{}}
	for _, f := range r.Findings {
		res := sarifResult{RuleID: f.Rule, RuleIndex: index[f.Rule], Level: f.Severity, Message: sarifMessage{f.Message},
			Locations: []sarifLocation{{PhysicalLocation: loc(f.File, f.Line)}}}
		for i, e := range f.Evidence {
			m := sarifMessage{e.Message}
			res.RelatedLocations = append(res.RelatedLocations, sarifLocation{ID: i + 1, PhysicalLocation: loc(e.File, e.Line), Message: &m})
		}
		run.Results = append(run.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

func loc(file string, line int) sarifPhysicalLocation {
	if line < 1 {
		line = 1
	}
	return sarifPhysicalLocation{ArtifactLocation: sarifArtifact{URI: filepath.ToSlash(file)}, Region: sarifRegion{StartLine: line}}
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}
