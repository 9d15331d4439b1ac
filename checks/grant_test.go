package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The grant semantics' other side: the correct twins that rely on the
// verbs contract (the QP grants at least what it requested) are findings
// in a tree one of whose providers grants 0 and succeeds, and the
// finding names it.
func TestGrantContractDeviatingProvider(t *testing.T) {
	for _, c := range []string{"grant_contract_ok.c", "grant_request_ok.c"} {
		t.Run(c, func(t *testing.T) {
			tree, _ := loadCase(t, filepath.Join("testdata", c))
			prov := filepath.Join(tree, "drivers/infiniband/hw/tcprov")
			if err := os.MkdirAll(prov, 0o755); err != nil {
				t.Fatal(err)
			}
			src := "static int tcprov_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr)\n{\n\tinit_attr->cap.max_inline_data = 0;\n\treturn 0;\n}\n"
			if err := os.WriteFile(filepath.Join(prov, "qp.c"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := Run(Options{Tree: tree, Paths: []string{caseModule}})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range rep.Findings {
				if f.Rule == RuleInlineSize && strings.Contains(f.Message, "tcprov (qp.c:3)") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("want one inline-size finding naming the deviating provider, got %v", rep.Findings)
			}
		})
	}
}
