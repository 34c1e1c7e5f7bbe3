package cli

import (
	"fmt"

	"github.com/sluicehq/sluice/runtime"
)

// progressPart renders one actor's progress on a progress line: its
// firings done, and those running now when some are ("consume=2+1": two
// done, one running), so that an actor whose firings last seconds is seen
// to work before its first firing ends.
func progressPart(a runtime.ActorProgress) string {
	if running := a.Started - a.Firings; running > 0 {
		return fmt.Sprintf("%s=%d+%d", a.Name, a.Firings, running)
	}
	return fmt.Sprintf("%s=%d", a.Name, a.Firings)
}
