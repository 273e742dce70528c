package shrimpscen

import (
	"bytes"
	"fmt"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/svm"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
)

// AppParams are svm-app's parameters: one SVM program (Table 1's
// Barnes-SVM, Ocean-SVM or Radix-SVM) at a size, under a protocol, on a
// number of nodes, with Table 2's and Table 4's switches: the scenario the
// sweep runs on many machines (paper sizes, what-ifs).
type AppParams struct {
	App           string `toml:"app"`
	Protocol      string `toml:"protocol"`
	Nodes         int    `toml:"nodes"`
	Bodies        int    `toml:"bodies"`
	Steps         int    `toml:"steps"`
	OceanN        int    `toml:"ocean_n"`
	OceanIters    int    `toml:"ocean_iters"`
	RadixKeys     int    `toml:"radix_keys"`
	SendSyscall   bool   `toml:"send_syscall"`
	RecvInterrupt string `toml:"recv_interrupt"`
	// Check compares the final shared memory with the sequential program
	// (untimed; seconds at the paper's sizes).
	Check bool `toml:"check"`
}

// AppDefaults are Ocean-SVM at Table 1's grid under AURC on 16 nodes.
func AppDefaults() *AppParams {
	b, o, r := cashapps.DefaultBarnes(), cashapps.DefaultOcean(), cashapps.DefaultRadix()
	return &AppParams{App: "ocean", Protocol: svm.AURC, Nodes: 16, Bodies: b.Bodies, Steps: b.Steps,
		OceanN: o.N, OceanIters: o.Iters, RadixKeys: r.Keys, RecvInterrupt: vmmc.RecvNone, Check: true}
}

// Keys implements scenario.Keyed.
// Metrics implements scenario.MetricLister (a sweep checks its --y against
// them before it runs; the first is a sweep's default): the simulated
// time, Figure 4's categories summed over the processes, and the counts.
func (p *AppParams) Metrics() []scenario.MetricDef {
	return []scenario.MetricDef{{Name: "sim_ms", Unit: "ms"},
		{Name: "computation_ms", Unit: "ms"}, {Name: "communication_ms", Unit: "ms"}, {Name: "barrier_ms", Unit: "ms"},
		{Name: "lock_ms", Unit: "ms"}, {Name: "protocol_ms", Unit: "ms"},
		{Name: "messages"}, {Name: "notifications"}, {Name: "fetches"}}
}

func (p *AppParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		scenario.Key("app", "program (Table 1)").OneOf("barnes", "ocean", "radix").From("ocean"),
		scenario.Key("protocol", "SVM protocol (4.2)").OneOf(svm.Protocols()...).From("assumed: aurc"),
		scenario.Key("nodes", "nodes").Range(1, 16).From(paper + " Figure 4: 16"),
		scenario.Key("bodies", "Barnes bodies").Range(2, 16384).From("cashapps.DefaultBarnes: 512 (Table 1: 16K)"),
		scenario.Key("steps", "Barnes time steps").Range(1, 100).From("cashapps.DefaultBarnes: 2 (SPLASH-2: 4)"),
		scenario.Key("ocean_n", "Ocean grid points per side").Range(4, 1026).Also("even").From("Table 1: 130"),
		scenario.Key("ocean_iters", "Ocean red-black iterations").Range(1, 10000).From("cashapps.DefaultOcean: 4 (PaperOcean: 96, assumed)"),
		scenario.Key("radix_keys", "Radix keys").Range(cashapps.MaxRadixProcs, 1<<21).Also("a multiple of 32").From("cashapps.DefaultRadix: 16384 (Table 1: 2M)"),
		scenario.Key("send_syscall", "a system call before every send (Table 2)").From("false"),
		scenario.Key("recv_interrupt", "an interrupt for every message or packet (Table 4)").OneOf(vmmc.RecvNone, vmmc.RecvMessage, vmmc.RecvPacket).From("none"),
		scenario.Key("check", "compare the final memory with the sequential program").From("true"),
	}
}

// program is the configured program and its size.
func (p *AppParams) program() (cashapps.Program, string, error) {
	switch p.App {
	case "barnes":
		c := cashapps.DefaultBarnes()
		c.Bodies, c.Steps = p.Bodies, p.Steps
		prog, err := cashapps.NewBarnes(c)
		if err != nil {
			return nil, "", &scenario.KeyError{Key: "bodies", Msg: err.Error()}
		}
		return prog, fmt.Sprintf("%d bodies, %d steps", c.Bodies, c.Steps), nil
	case "ocean":
		prog, err := cashapps.NewOcean(cashapps.OceanConfig{N: p.OceanN, Iters: p.OceanIters})
		if err != nil {
			return nil, "", &scenario.KeyError{Key: "ocean_n", Msg: err.Error()}
		}
		return prog, fmt.Sprintf("%dx%d, %d iterations", p.OceanN, p.OceanN, p.OceanIters), nil
	default:
		c := cashapps.DefaultRadix()
		c.Keys = p.RadixKeys
		prog, err := cashapps.NewRadix(c)
		if err != nil {
			return nil, "", &scenario.KeyError{Key: "radix_keys", Msg: err.Error()}
		}
		return prog, fmt.Sprintf("%d keys of %d bits, radix %d", c.Keys, c.KeyBits, 1<<c.RadixBits), nil
	}
}

func (p *AppParams) config() shrimptb.SVMConfig {
	c := shrimptb.DefaultSVM(p.Protocol)
	c.Cluster.Nodes = p.Nodes
	c.Cluster.Params.SendSyscall = p.SendSyscall
	c.Cluster.Params.RecvInterrupt = p.RecvInterrupt
	return c
}

// Validate implements scenario.Params: the keys, and whether the program
// fits the nodes (shrimptb.CheckSVM), before any run.
func (p *AppParams) Validate() error {
	if err := scenario.CheckKeys(p); err != nil {
		return err
	}
	prog, _, err := p.program()
	if err != nil {
		return err
	}
	if err := shrimptb.CheckSVM(p.config(), prog); err != nil {
		key := map[string]string{"barnes": "bodies", "ocean": "ocean_n", "radix": "radix_keys"}[p.App]
		return &scenario.KeyError{Key: key, Msg: err.Error()}
	}
	return nil
}

// AppScenario is svm-app.
func AppScenario() *scenario.Scenario {
	return scenario.Typed("svm-app", "SVM: Barnes, Ocean or Radix under HLRC, HLRC-AU or AURC",
		AppDefaults, RunApp)
}

// RunApp runs the program in e and reports its time, its breakdown
// (Figure 4's categories) and its counters; a check compares its memory
// with the sequential program's.
func RunApp(e *env.Env, p *AppParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	prog, size, err := p.program()
	if err != nil {
		return nil, err
	}
	b, err := shrimptb.BuildSVM(e, p.config(), prog)
	if err != nil {
		return nil, err
	}
	res, runErr := b.Run()
	rep := &scenario.Report{Title: fmt.Sprintf("svm-app: %s (%s) on %d SHRIMP nodes under %s", prog.Name(), size, p.Nodes, p.Protocol)}
	rep.Result = res.Run
	pp := svmPapers[p.App]
	rep.Add("simulated time", fmt.Sprintf("%.3f ms", msOf(res.Time)), "", fmt.Sprintf("the last process's end; Table 1's %s at %s: %.1f s sequential", pp.name, pp.size, pp.seq))
	tt := res.TotalTimes
	tot := float64(tt.Total())
	for _, r := range []struct {
		what string
		t    clock.Time
	}{{"computation", tt.Compute}, {"communication", tt.Data}, {"barrier", tt.Barrier}, {"lock", tt.Lock}, {"protocol", tt.Protocol + tt.Handler}} {
		rep.Add("  "+r.what, fmt.Sprintf("%.3f ms (%.1f%%)", msOf(r.t), pct(float64(r.t), tot)), "", "Figure 4's category, summed over the processes")
		rep.Measure(r.what+"_ms", msOf(r.t), "ms")
	}
	t := res.Total
	rep.Add("messages / notifications", fmt.Sprintf("%d / %d", t.Messages, res.Notifications), "", "deliberate-update sends / notifications delivered (Table 3)")
	rep.Add("faults, fetches, twins, diffs, intervals", fmt.Sprintf("%d, %d, %d, %d, %d", t.ReadFaults+t.WriteFaults, t.Fetches, t.Twins, t.Diffs, t.Intervals), "", "host/svm's counters, summed")
	rep.Measure("sim_ms", msOf(res.Time), "ms")
	rep.Measure("messages", float64(t.Messages), "")
	rep.Measure("notifications", float64(res.Notifications), "")
	rep.Measure("fetches", float64(t.Fetches), "")
	rep.Check("no checker violation, every process finished", runErr == nil, "%s", oneLine(runErr))
	if p.Check {
		want, serr := cashapps.RunSequential(prog)
		ok := serr == nil && bytes.Equal(res.Memory, want)
		rep.Check("final memory equals the sequential program's", ok, "%d bytes", len(res.Memory))
	}
	return rep, nil
}

// oneLine is err's first line, or "ok".
func oneLine(err error) string {
	if err == nil {
		return "ok"
	}
	s := err.Error()
	for i, c := range s {
		if c == '\n' {
			return s[:i] + " ..."
		}
	}
	return s
}
