package report

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// ValidateKCIDB checks a report against the KCIDB v5.3 schema's rules for
// the objects patchctl writes: the version, required properties, no
// properties the schema does not define (it forbids them), id and origin
// patterns, status values, dot-separated test paths, the patchset hash,
// date-time and URI formats, and that tests and builds point at objects in
// the report. (Written from the schema in kernelci/kcidb-io, v05_03.) It is
// a quick in-process check; reportcheck.KCIDB runs the full v5.3 JSON
// schema with python3-jsonschema.
func ValidateKCIDB(data []byte) []string {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	v, ok := doc["version"].(map[string]any)
	if !ok || v["major"] != float64(5) || v["minor"] != float64(3) {
		bad("version is %v, want {major: 5, minor: 3}", doc["version"])
	}
	origin := regexp.MustCompile(`^[a-z0-9_]+$`)
	originID := regexp.MustCompile(`^[a-z0-9_]+:.*$`)
	path := regexp.MustCompile(`^[.a-zA-Z0-9_-]*$`)
	sha256 := regexp.MustCompile(`^$|^[0-9a-f]{64}$`)
	statuses := map[string]bool{"FAIL": true, "ERROR": true, "MISS": true, "PASS": true, "DONE": true, "SKIP": true}
	props := map[string]map[string]string{
		"checkouts": {"id": "id", "origin": "origin", "tree_name": "string", "git_repository_url": "uri", "git_commit_hash": "commit",
			"git_commit_name": "string", "git_commit_tags": "strings", "git_repository_branch": "string", "patchset_files": "resources", "patchset_hash": "sha256",
			"message_id": "string", "comment": "string", "start_time": "date-time", "log_url": "uri", "log_excerpt": "string",
			"valid": "bool", "misc": "object"},
		"builds": {"id": "id", "checkout_id": "id", "origin": "origin", "comment": "string", "start_time": "date-time", "duration": "number",
			"architecture": "arch", "command": "string", "compiler": "string", "input_files": "resources", "output_files": "resources",
			"config_name": "string", "config_url": "uri", "log_url": "uri", "log_excerpt": "string", "status": "status", "misc": "object"},
		"tests": {"id": "id", "build_id": "id", "origin": "origin", "environment": "object", "path": "path", "comment": "string",
			"log_url": "uri", "log_excerpt": "string", "status": "status", "number": "object", "start_time": "date-time",
			"duration": "number", "input_files": "resources", "output_files": "resources", "misc": "object"},
	}
	required := map[string][]string{"checkouts": {"id", "origin"}, "builds": {"checkout_id", "id", "origin"}, "tests": {"build_id", "id", "origin"}}
	ids := map[string]map[string]bool{"checkouts": {}, "builds": {}}
	for _, kind := range []string{"checkouts", "builds", "tests"} {
		list, _ := doc[kind].([]any)
		for i, o := range list {
			obj, ok := o.(map[string]any)
			if !ok {
				bad("%s[%d] is not an object", kind, i)
				continue
			}
			for _, r := range required[kind] {
				if _, ok := obj[r]; !ok {
					bad("%s[%d] lacks %s", kind, i, r)
				}
			}
			for k, val := range obj {
				typ, known := props[kind][k]
				if !known {
					bad("%s[%d] has %q, which the schema does not allow", kind, i, k)
					continue
				}
				s, isStr := val.(string)
				switch typ {
				case "id":
					if !isStr || !originID.MatchString(s) {
						bad("%s[%d].%s %q is not origin:id", kind, i, k, s)
					}
				case "origin":
					if !isStr || !origin.MatchString(s) {
						bad("%s[%d].origin %q", kind, i, s)
					}
				case "status":
					if !statuses[s] {
						bad("%s[%d].status %q", kind, i, s)
					}
				case "path":
					if !isStr || !path.MatchString(s) {
						bad("%s[%d].path %q", kind, i, s)
					}
				case "sha256":
					if !isStr || !sha256.MatchString(s) {
						bad("%s[%d].%s %q is not a sha256", kind, i, k, s)
					}
				case "date-time":
					if _, err := time.Parse(time.RFC3339, s); err != nil {
						bad("%s[%d].%s %q is not a date-time", kind, i, k, s)
					}
				case "uri":
					if u, err := url.Parse(s); err != nil || u.Scheme == "" || (k == "git_repository_url" && u.Scheme != "https" && u.Scheme != "git") {
						bad("%s[%d].%s %q is not a URI", kind, i, k, s)
					}
				case "arch":
					if !regexp.MustCompile(`^[a-z0-9_]*$`).MatchString(s) {
						bad("%s[%d].architecture %q", kind, i, s)
					}
				case "bool":
					if _, ok := val.(bool); !ok {
						bad("%s[%d].%s is not a boolean", kind, i, k)
					}
				case "number":
					if _, ok := val.(float64); !ok {
						bad("%s[%d].%s is not a number", kind, i, k)
					}
				case "resources":
					rs, ok := val.([]any)
					if !ok {
						bad("%s[%d].%s is not a list", kind, i, k)
					}
					for _, r := range rs {
						m, _ := r.(map[string]any)
						n, _ := m["name"].(string)
						u, _ := m["url"].(string)
						if len(m) != 2 || n == "" || regexp.MustCompile(`[/\x00]`).MatchString(n) || u == "" {
							bad("%s[%d].%s: bad resource %v", kind, i, k, r)
						}
					}
				case "string":
					if !isStr {
						bad("%s[%d].%s is not a string", kind, i, k)
					}
				case "commit":
					if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(s) {
						bad("%s[%d].%s %q is not a 40-digit commit hash", kind, i, k, s)
					}
				case "strings":
					list, ok := val.([]any)
					if !ok {
						bad("%s[%d].%s is not a list", kind, i, k)
					}
					for _, e := range list {
						if _, ok := e.(string); !ok {
							bad("%s[%d].%s has %v, not a string", kind, i, k, e)
						}
					}
				}
			}
			if id, ok := obj["id"].(string); ok && kind != "tests" {
				ids[kind][id] = true
			}
		}
	}
	for _, link := range [][3]string{{"builds", "checkout_id", "checkouts"}, {"tests", "build_id", "builds"}} {
		list, _ := doc[link[0]].([]any)
		for i, o := range list {
			obj, _ := o.(map[string]any)
			if id, _ := obj[link[1]].(string); !ids[link[2]][id] {
				bad("%s[%d].%s %q names nothing in the report", link[0], i, link[1], id)
			}
		}
	}
	return errs
}
