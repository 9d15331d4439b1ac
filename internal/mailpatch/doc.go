// Package mailpatch is patchctl's import stage: it reads patches as they come
// off a mailing-list archive (mbox, mboxrd, RFC 2822 mails, or the bare text
// that some archives show) and turns each message into a clean patch in
// git format-patch form that git am accepts.
//
// Every change it makes to the received text is a Repair, recorded as data
// with the input line, the text before and after, and why the change is
// provable. Input it cannot repair with proof is refused with an error that
// names the file and line; nothing is written for a refused import.
//
// Reading is split from repairing and from formatting: read.go finds the
// messages, message.go takes a message apart, repair_*.go mend it,
// validate.go refuses unsafe input and format.go writes the result.
package mailpatch
