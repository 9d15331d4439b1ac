package report

import (
	"io"

	"github.com/patchctl/patchctl/internal/pipeline"
)

// JUnit writes the run as JUnit XML with the default Options (paths
// relative to the repository found above the run's patches).
func JUnit(w io.Writer, res *pipeline.Result) error {
	o := Options{}
	if err := o.defaults(res); err != nil {
		return err
	}
	return junit(w, res, newNamer(&o, ""))
}
