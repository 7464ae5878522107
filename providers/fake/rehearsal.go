package fake

import (
	"bytes"

	"github.com/massgen-go/massgen-mcp/providers"
)

// RehearsalFile is the file a coding-agent CLI writes in its workspace in a
// rehearsal (Rehearsal), so that a rehearsed team shows where its files go.
const RehearsalFile = "rehearsal.md"

// rehearsalMark is in every rehearsal file: once the CLI's request holds it
// (its own edit call is in the history), the file is written.
const rehearsalMark = "written by a fake model in a massgen-mcp rehearsal"

// Rehearsal is the policy of a rehearsal (`run --rehearse`,
// `fake-providers`): an API agent plays DefaultReply; a coding-agent CLI
// first writes RehearsalFile with its own edit tool, then answers (or
// votes) through its workflow server, as a real model would.
func Rehearsal(c Call) Reply {
	switch c.Format {
	case "codex", "gemini_cli", claudeCodeFormat:
	default:
		return DefaultReply(c)
	}
	if r := DefaultReply(c); r.Kind == ReplyVote {
		return r
	}
	if !bytes.Contains(c.Body, []byte(rehearsalMark)) {
		return Reply{Kind: ReplyWriteFiles, Files: []providers.AnswerFile{{Path: RehearsalFile,
			Content: "# Rehearsal\n\nThis file was " + rehearsalMark + " (" + c.Model + "): nothing real was called.\n"}}}
	}
	return Reply{Kind: ReplyNewAnswer, Content: "Fake answer from " + c.Model + ": see " + RehearsalFile + " in my workspace.\nAnswer: 42"}
}
