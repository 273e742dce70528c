package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/nisim/nisim/verify/jobs"
	"github.com/spf13/cobra"
)

func newJob() *cobra.Command { return newJobOn(os.Getenv) }

// newJobOn is the job command reading the environment through getenv (the
// specs give it their own).
func newJobOn(getenv func(string) string) *cobra.Command {
	var index string
	var info bool
	c := &cobra.Command{
		Use:   "job DIR",
		Short: "run one job of a planned sweep or regression and write its result file",
		Long: `Run job --index of the plan in DIR ('nisim sweep --plan DIR') and write its
result to the file its manifest entry names (DIR/results/NNNNNN.json),
atomically, whatever the run did. Without --index the index is read from
SLURM_ARRAY_TASK_ID (a Slurm job array), else JOB_COMPLETION_INDEX (a
Kubernetes Indexed Job). The job needs only DIR: its configuration is in the
manifest. --info prints the plan's kind and job count ("sweep 12") and runs
nothing, for scripts that size a job array.
Exit status: 0 the run passed (or saturated), 1 it failed (its result, with
the reason, is written), 2 bad usage, no index, an index out of range, a
corrupt or newer manifest, or an unwritable result.`,
		Args: exactArgs(1, "the plan directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if info {
				m, err := jobs.Load(dir)
				if err != nil {
					return inputErr(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %d\n", m.Kind, len(m.Jobs))
				return nil
			}
			var i int
			if cmd.Flags().Changed("index") {
				v, err := strconv.Atoi(index)
				if err != nil || v < 0 {
					return usageErr("--index %q: want a job index (a non-negative integer)", index)
				}
				i = v
			} else {
				v, _, err := jobs.IndexFromEnv(getenv)
				if err != nil {
					return usageErr("%v", err)
				}
				i = v
			}
			m, err := jobs.Load(dir)
			if err != nil {
				return inputErr(err)
			}
			res, err := jobs.RunJob(catalog(), dir, m, i)
			if err != nil {
				return inputErr(err)
			}
			path := jobs.ResultPath(dir, &m.Jobs[i])
			fmt.Fprintf(cmd.OutOrStdout(), "job %d of %d: %s: %s\n", i, len(m.Jobs), res.Status, path)
			if res.Failed() {
				return failErr(fmt.Errorf("job %d failed: %s", i, res.Reason))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&info, "info", false, "print the plan's kind and job count (\"sweep 12\") and run nothing")
	c.Flags().StringVar(&index, "index", "", "the job to run, `I` from 0 (default: $SLURM_ARRAY_TASK_ID, else $JOB_COMPLETION_INDEX)")
	return c
}
