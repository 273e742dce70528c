package main

import (
	"github.com/nisim/nisim/verify/scenario"
	"github.com/spf13/cobra"
)

// newConfig is `nisim config SCENARIO [--config F] [--set k=v ...]`: the
// effective configuration as TOML, each key with its unit, allowed range
// and source as a comment (scenario.WriteConfig), text that --config reads
// back to the same configuration.
func newConfig() *cobra.Command {
	var (
		file string
		sets []string
	)
	c := &cobra.Command{
		Use:   "config SCENARIO",
		Short: "print a scenario's effective parameters as TOML, with each key's unit, range and source",
		Long: `Print the parameters SCENARIO would run with: its embedded defaults,
overridden by --config (a TOML file) and then by each --set key=value, as
'nisim run' applies them. Each key is preceded by a comment with its unit, the
range its value must lie in (the bound the run enforces) and where the value
came from: the default (with its origin in the papers or the code, where there
is one), the --config file or --set. The output is TOML that 'nisim run
SCENARIO --config FILE' reads back to the same parameters.`,
		Args: exactArgs(1, "a scenario name"),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := catalog().Lookup(args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			p := s.Defaults()
			sources, err := configure(p, file, sets)
			if err != nil {
				return inputErr(err)
			}
			if err := scenario.WriteConfig(c.OutOrStdout(), s.Name, p, sources); err != nil {
				return inputErr(err)
			}
			return nil
		},
	}
	c.Flags().StringArrayVar(&sets, "set", nil, "override a parameter: `key=value` (repeatable)")
	c.Flags().StringVar(&file, "config", "", "read parameters from a TOML `FILE` (- for standard input)")
	return c
}
