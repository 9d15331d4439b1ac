package checks

// ProviderRow is what one provider grants for a requested inline size.
type ProviderRow struct {
	Provider string `json:"provider"`
}

// LayoutRow is a struct size from headers and from DWARF.
type LayoutRow struct {
	Struct string `json:"struct"`
}

func checkInlineSize(opts Options, sites []inlineSite, facts map[string]*Facts, files []*file) ([]Finding, []LayoutRow) {
	return nil, nil
}

func providerTable(tree string) ([]ProviderRow, error) { return nil, nil }

func checkpatch(tree string, patches []string) ([]Finding, error) { return nil, nil }
