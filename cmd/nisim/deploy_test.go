package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.yaml.in/yaml/v3"

	"github.com/nisim/nisim/verify/jobs"
)

// The deploy/ files (issue 12 section 4) against the command they call:
// every nisim command line they issue is run here, in-process, so a flag or
// subcommand renamed in nisim fails these specs rather than a cluster run.

// k8sObject is what the specs read of a Kubernetes object.
type k8sObject struct {
	Kind     string
	Metadata struct {
		Name   string
		Labels map[string]string
	}
	Spec struct {
		CompletionMode       string `yaml:"completionMode"`
		Completions          *int
		Parallelism          *int
		BackoffLimitPerIndex *int `yaml:"backoffLimitPerIndex"`
		PodFailurePolicy     struct {
			Rules []struct {
				Action      string
				OnExitCodes struct {
					ContainerName string `yaml:"containerName"`
					Operator      string
					Values        []int
				} `yaml:"onExitCodes"`
			}
		} `yaml:"podFailurePolicy"`
		Template struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Name         string
					Command      []string
					VolumeMounts []struct {
						Name      string
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				}
				Volumes []struct {
					Name                  string
					PersistentVolumeClaim struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				}
			}
		}
	}
}

// readK8s reads every document of a YAML file.
func readK8s(path string) []k8sObject {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	d := yaml.NewDecoder(bytes.NewReader(data))
	d.KnownFields(false)
	var out []k8sObject
	for {
		var o k8sObject
		err := d.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		Expect(err).NotTo(HaveOccurred(), path)
		out = append(out, o)
	}
	return out
}

// fakeBin writes an executable script name into dir that appends its
// arguments, one line per call, to dir/name.log and runs body.
func fakeBin(dir, name, body string) {
	script := fmt.Sprintf("#!/usr/bin/env bash\necho \"$*\" >>%q\n%s\n", filepath.Join(dir, name+".log"), body)
	Expect(os.WriteFile(filepath.Join(dir, name), []byte(script), 0o777)).To(Succeed())
}

// calls returns the argument lines a fake was called with.
func calls(dir, name string) []string {
	data, err := os.ReadFile(filepath.Join(dir, name+".log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// sh runs a bash script of deploy/ with env added to the environment.
func sh(env []string, script string, args ...string) (string, string, error) {
	cmd := exec.Command("bash", append([]string{filepath.Join("..", "..", script)}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

var _ = Describe("deploy/", func() {
	if _, err := exec.LookPath("bash"); err != nil {
		return
	}

	It("has shell scripts bash can parse", func() {
		for _, f := range []string{"deploy/slurm/sweep.sbatch", "deploy/slurm/merge.sbatch", "deploy/slurm/submit.sh", "tools/slurm-check.sh"} {
			out, err := exec.Command("bash", "-n", filepath.Join("..", "..", f)).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "%s: %s", f, out)
		}
	})

	It("runs nisim job with the array task's index (plus an offset) and the merge of the plan's kind", func() {
		bin := GinkgoT().TempDir()
		fakeBin(bin, "nisim", "")
		nisimEnv := "NISIM=" + filepath.Join(bin, "nisim")
		_, errOut, err := sh([]string{nisimEnv, "SLURM_ARRAY_TASK_ID=2"}, "deploy/slurm/sweep.sbatch", "/shared/p")
		Expect(err).NotTo(HaveOccurred(), errOut)
		_, errOut, err = sh([]string{nisimEnv, "SLURM_ARRAY_TASK_ID=3"}, "deploy/slurm/sweep.sbatch", "/shared/p", "1000")
		Expect(err).NotTo(HaveOccurred(), errOut)
		_, errOut, err = sh([]string{nisimEnv}, "deploy/slurm/merge.sbatch", "/shared/p")
		Expect(err).NotTo(HaveOccurred(), errOut)
		_, errOut, err = sh([]string{nisimEnv}, "deploy/slurm/merge.sbatch", "/shared/p", "regress")
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(calls(bin, "nisim")).To(Equal([]string{"job /shared/p", "job /shared/p --index 1003", "sweep merge /shared/p", "regress merge /shared/p"}))

		// Not a task of an array, or a kind it cannot merge: refused.
		_, errOut, err = sh([]string{nisimEnv, "SLURM_ARRAY_TASK_ID="}, "deploy/slurm/sweep.sbatch", "/shared/p")
		Expect(err).To(HaveOccurred())
		Expect(errOut).To(ContainSubstring("not a task of a job array"))
		_, errOut, err = sh([]string{nisimEnv}, "deploy/slurm/merge.sbatch", "/shared/p", "other")
		Expect(err).To(HaveOccurred())
		Expect(errOut).To(ContainSubstring("kind other"))
		_, errOut, err = sh([]string{nisimEnv, "SLURM_ARRAY_TASK_ID=1"}, "deploy/slurm/sweep.sbatch", "/shared/p", "x")
		Expect(err).To(HaveOccurred())
		Expect(errOut).To(ContainSubstring("OFFSET 'x' is not a job index"))
		Expect(calls(bin, "nisim")).To(HaveLen(4))
	})

	It("submits a real plan as arrays of at most MaxArraySize tasks and a merge after all of them", func() {
		dir := filepath.Join(GinkgoT().TempDir(), "plan")
		code, _, errOut := nisim("sweep", "atm-star", "--grid", "injection_rate=0.1,0.2,0.3,0.4,0.5", "--seeds", "2", "--plan", dir)
		Expect(code).To(Equal(0), errOut)
		m, err := jobs.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Jobs).To(HaveLen(10))

		bin := GinkgoT().TempDir()
		fakeBin(bin, "scontrol", `echo "MaxArraySize            = 4"`)
		fakeBin(bin, "sbatch", `echo $((100 + $(wc -l <"$(dirname "$0")/sbatch.log")))`)
		// A nisim that answers --info as the real one does for the plan.
		fakeInfo := func(dir string) {
			code, info, errOut := nisim("job", dir, "--info")
			Expect(code).To(Equal(0), errOut)
			fakeBin(bin, "nisim", fmt.Sprintf("echo %q", strings.TrimSpace(info)))
		}
		fakeInfo(dir)
		path := "PATH=" + bin + ":" + os.Getenv("PATH")
		out, errOut, err := sh([]string{path}, "deploy/slurm/submit.sh", dir, "--partition", "batch")
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(out).To(Equal("101\n102\n103\n104\n"))
		Expect(errOut).To(ContainSubstring("sweep of 10 jobs in " + dir))
		script := func(name string) string {
			p, err := filepath.Abs(filepath.Join("..", "..", "deploy", "slurm", name))
			Expect(err).NotTo(HaveOccurred())
			return p
		}
		logs := filepath.Join(dir, "logs")
		Expect(calls(bin, "sbatch")).To(Equal([]string{
			"--parsable --array=0-3 --output=" + logs + "/job-%A_%a.out --partition batch " + script("sweep.sbatch") + " " + dir + " 0",
			"--parsable --array=0-3 --output=" + logs + "/job-%A_%a.out --partition batch " + script("sweep.sbatch") + " " + dir + " 4",
			"--parsable --array=0-1 --output=" + logs + "/job-%A_%a.out --partition batch " + script("sweep.sbatch") + " " + dir + " 8",
			"--parsable --dependency=afterany:101:102:103 --output=" + logs + "/merge-%j.out --partition batch " + script("merge.sbatch") + " " + dir + " sweep",
		}))

		// A regression tier's plan goes the same way, merged as a tier.
		tier := filepath.Join(GinkgoT().TempDir(), "tier")
		code, _, errOut = nisim("regress", "--scale", "0.0005", "--system", "atm", "--plan", tier)
		Expect(code).To(Equal(0), errOut)
		fakeInfo(tier)
		out, errOut, err = sh([]string{path}, "deploy/slurm/submit.sh", tier)
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(out).To(Equal("105\n106\n"))
		c := calls(bin, "sbatch")
		Expect(c[4]).To(ContainSubstring("--array=0-1 "))
		Expect(c[5]).To(HaveSuffix(script("merge.sbatch") + " " + tier + " regress"))
		Expect(calls(bin, "nisim")).To(Equal([]string{"job " + dir + " --info", "job " + tier + " --info"}))

		// No plan: refused before sbatch.
		_, errOut, err = sh([]string{path}, "deploy/slurm/submit.sh", GinkgoT().TempDir())
		Expect(err).To(HaveOccurred())
		Expect(errOut).To(ContainSubstring("manifest.json: no such file"))
		Expect(calls(bin, "sbatch")).To(HaveLen(6))
	})

	It("has a Kubernetes plan, Indexed Job and merge that agree with each other and with nisim", func() {
		objs := readK8s(filepath.Join("..", "..", "deploy", "k8s", "sweep-job.yaml"))
		byStep := map[string][]k8sObject{}
		for _, o := range objs {
			Expect(o.Metadata.Labels).To(HaveKeyWithValue("app.kubernetes.io/name", "nisim"), o.Metadata.Name)
			step := o.Metadata.Labels["nisim.step"]
			byStep[step] = append(byStep[step], o)
		}
		Expect(byStep["plan"]).To(HaveLen(2)) // the volume and the plan Job
		Expect(byStep["run"]).To(HaveLen(1))
		Expect(byStep["merge"]).To(HaveLen(1))
		pvc, plan := byStep["plan"][0], byStep["plan"][1]
		run, merge := byStep["run"][0], byStep["merge"][0]
		Expect(pvc.Kind).To(Equal("PersistentVolumeClaim"))

		command := func(o k8sObject) []string {
			Expect(o.Kind).To(Equal("Job"), o.Metadata.Name)
			t := o.Spec.Template.Spec
			Expect(t.RestartPolicy).To(Equal("Never"), o.Metadata.Name)
			Expect(t.Containers).To(HaveLen(1), o.Metadata.Name)
			Expect(t.Volumes).To(HaveLen(1), o.Metadata.Name)
			Expect(t.Volumes[0].PersistentVolumeClaim.ClaimName).To(Equal(pvc.Metadata.Name), o.Metadata.Name)
			Expect(t.Containers[0].VolumeMounts).To(HaveLen(1), o.Metadata.Name)
			Expect(t.Containers[0].VolumeMounts[0].Name).To(Equal(t.Volumes[0].Name), o.Metadata.Name)
			Expect(t.Containers[0].VolumeMounts[0].MountPath).To(Equal("/data"), o.Metadata.Name)
			cmd := t.Containers[0].Command
			Expect(cmd[0]).To(Equal("nisim"), o.Metadata.Name)
			return cmd[1:]
		}

		// The plan Job's command, run here into a temporary directory in
		// place of the volume, plans as many jobs as the run Job completes.
		planCmd := command(plan)
		Expect(planCmd[len(planCmd)-2:]).To(Equal([]string{"--plan", "/data/sweep"}))
		dir := filepath.Join(GinkgoT().TempDir(), "sweep")
		code, _, errOut := nisim(append(planCmd[:len(planCmd)-1:len(planCmd)-1], dir)...)
		Expect(code).To(Equal(0), errOut)
		m, err := jobs.Load(dir)
		Expect(err).NotTo(HaveOccurred())

		Expect(run.Spec.CompletionMode).To(Equal("Indexed"))
		Expect(run.Spec.Completions).NotTo(BeNil())
		Expect(*run.Spec.Completions).To(Equal(len(m.Jobs)))
		Expect(*run.Spec.Parallelism).To(BeNumerically("<=", len(m.Jobs)))
		Expect(command(run)).To(Equal([]string{"job", "/data/sweep"}))
		// A failed run (exit 1) or bad input (exit 2) fails its index for
		// good: nisim job is deterministic.
		Expect(run.Spec.BackoffLimitPerIndex).NotTo(BeNil())
		Expect(run.Spec.PodFailurePolicy.Rules).To(HaveLen(1))
		rule := run.Spec.PodFailurePolicy.Rules[0]
		Expect(rule.Action).To(Equal("FailIndex"))
		Expect(rule.OnExitCodes.ContainerName).To(Equal(run.Spec.Template.Spec.Containers[0].Name))
		Expect(rule.OnExitCodes.Operator).To(Equal("In"))
		Expect(rule.OnExitCodes.Values).To(ConsistOf(1, 2))
		Expect(command(merge)).To(Equal([]string{"sweep", "merge", "/data/sweep"}))

		// The run Job's pods, by their JOB_COMPLETION_INDEX, then the merge.
		for i := range len(m.Jobs) {
			code, out, errOut := run1(newJobOn(func(k string) string {
				if k == jobs.K8sIndexVar {
					return fmt.Sprint(i)
				}
				return ""
			}), dir)
			Expect(code).To(Equal(0), out+errOut)
		}
		code, _, errOut = nisim("sweep", "merge", dir)
		Expect(code).To(Equal(0), errOut)
		Expect(filepath.Join(dir, "sweep.csv")).To(BeARegularFile())
		Expect(filepath.Join(dir, "sweep.svg")).To(BeARegularFile())
	})
})

// run1 runs one command built by the specs (not the root) with args and
// returns the exit status as run would, with its outputs.
func run1(c interface {
	SetArgs([]string)
	SetOut(io.Writer)
	SetErr(io.Writer)
	Execute() error
}, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	c.SetArgs(args)
	c.SetOut(&out)
	c.SetErr(&errb)
	err := c.Execute()
	code := 0
	if err != nil {
		code = 2
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
	}
	return code, out.String(), errb.String()
}
