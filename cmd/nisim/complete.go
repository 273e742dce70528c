package main

import (
	"strings"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/spf13/cobra"
)

// addCompletions gives the commands that take a scenario (run, config,
// sweep) completion of the scenario name, of --set keys (the scenario's
// keys from its Defaults, as "key=", and for a key with listed values
// those values) and of --mutate names. The shell scripts come from cobra's
// own `completion` command (bash, zsh, fish, powershell), which asks the
// hidden `__complete` command for these.
func addCompletions(root *cobra.Command) {
	for _, name := range []string{"run", "config", "sweep"} {
		c, _, err := root.Find([]string{name})
		if err != nil || c == root {
			continue
		}
		c.ValidArgsFunction = completeScenario
		if c.Flags().Lookup("set") != nil {
			_ = c.RegisterFlagCompletionFunc("set", completeSet)
		}
		if c.Flags().Lookup("mutate") != nil {
			_ = c.RegisterFlagCompletionFunc("mutate", completeMutate)
		}
	}
}

// completeScenario completes the first argument with the scenario names.
func completeScenario(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, s := range catalog() {
		if strings.HasPrefix(s.Name, toComplete) {
			out = append(out, cobra.CompletionWithDesc(s.Name, s.Summary))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeSet completes a --set argument: before the "=", the keys of the
// scenario named by the first argument (with "=" appended and no space
// after it); after it, the values of a key that lists them.
func completeSet(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	s, err := catalog().Lookup(args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	entries, err := scenario.EffectiveConfig(s.Defaults(), scenario.Sources{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if key, val, ok := strings.Cut(toComplete, "="); ok {
		var out []cobra.Completion
		for _, e := range entries {
			if e.Key != key {
				continue
			}
			for _, v := range e.Spec.Values {
				if strings.HasPrefix(v, val) {
					out = append(out, key+"="+v)
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, e := range entries {
		if strings.HasPrefix(e.Key, toComplete) {
			out = append(out, cobra.CompletionWithDesc(e.Key+"=", e.Comment()))
		}
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// completeMutate completes a --mutate argument with the test-only faults'
// names, as "name=".
func completeMutate(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, m := range env.Mutations() {
		if strings.HasPrefix(m.Name, toComplete) {
			out = append(out, cobra.CompletionWithDesc(m.Name+"=", m.Doc))
		}
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}
