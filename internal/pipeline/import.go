package pipeline

import "github.com/patchctl/patchctl/internal/mailpatch"

// Import is the import stage: mailing-list copies (files, mboxes,
// folders) turned into git-am-ready patches, with their repairs and
// warnings. treeDir, when set, is the kernel tree the patches' paths are
// checked against; allowUnicodeControl accepts bidirectional control
// characters.
func Import(paths []string, treeDir string, allowUnicodeControl bool) (*mailpatch.Result, error) {
	return mailpatch.Import(paths, mailpatch.Options{Tree: treeDir, AllowUnicodeControl: allowUnicodeControl})
}
