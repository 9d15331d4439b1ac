package checks

import (
	"context"

	"github.com/patchctl/patchctl/checks/engine"
	"github.com/patchctl/patchctl/internal/preproc"
)

// Preprocessor hands the checks a file's translation unit as the compiler
// sees it (engine.Preprocessor; Options.Preprocessor).
type Preprocessor = engine.Preprocessor

// NewPreprocessor wraps a preprocessing session for Options.Preprocessor.
func NewPreprocessor(ctx context.Context, s *preproc.Session) Preprocessor {
	return engine.NewPreprocessor(ctx, s)
}
