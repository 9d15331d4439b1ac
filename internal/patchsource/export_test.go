package patchsource

import "github.com/patchctl/patchctl/internal/mailpatch"

// Inbox finds the thread of msgid in a local public-inbox archive
// without a cache: see InboxIndexed.
func Inbox(dir, msgid string) (mailpatch.Input, error) {
	return InboxIndexed(dir, msgid, InboxOptions{})
}
