package scenario

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/waves"
)

// CheckWaveNames builds s on its defaults with a waveform registry and
// runs it for 1 ns (every signal is declared when the system is built),
// and returns an error naming the first signal whose name breaks the
// naming convention of waves' package doc (waves.CheckName), or the
// registry's own refusal (a name both a scope and a signal, a duplicate).
// The dump goes to a temporary directory under dir, removed afterwards.
func CheckWaveNames(s *Scenario, dir string) error {
	tmp, err := os.MkdirTemp(dir, "names")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	_, e, _, _ := Exec(s, s.Defaults(), Options{Seed: 1, VCD: filepath.Join(tmp, "names.vcd"), TimeLimit: clock.Nanosecond})
	if e == nil {
		return fmt.Errorf("%s: not built", s.Name)
	}
	if err := e.Waves.Err(); err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	sigs := e.Waves.Signals()
	if len(sigs) == 0 {
		return fmt.Errorf("%s: declares no signal", s.Name)
	}
	for _, sig := range sigs {
		if err := waves.CheckName(sig.Name()); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}
