package shrimptb

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/svm"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// The SVM bench (issue 19, docs/svm-design.md): shared virtual memory
// (host/svm: HLRC, HLRC-AU, AURC, shrimp-design-choices.txt section 4.2)
// on the cluster, running host/cashapps programs. The runtime's process
// handle is a cashapps.Proc.
var _ cashapps.Proc = (*svm.Process)(nil)

// SVMConfig is one SVM run: the cluster and the protocol.
type SVMConfig struct {
	Cluster  Config
	Protocol string
	// Events is told of every protocol event (nil: none).
	Events func(svm.Event)
}

// DefaultSVM is the paper's cluster (sixteen nodes) under protocol.
func DefaultSVM(protocol string) SVMConfig {
	return SVMConfig{Cluster: DefaultConfig(), Protocol: protocol}
}

// SVMResult is a finished run.
type SVMResult struct {
	// Memory is the final shared memory, from the homes' copies.
	Memory []byte
	// Stats and Times are each node's; Total and TotalTimes their sums.
	Stats      []svm.Stats
	Total      svm.Stats
	Times      []svm.Times
	TotalTimes svm.Times
	// Time is when the last process finished.
	Time clock.Time
	// Notifications is the notifications the kernels delivered; Interrupts
	// the NI interrupts they took.
	Notifications, Interrupts uint64
	Run                       env.Result
}

// SVMBench is a built SVM run.
type SVMBench struct {
	Env     *env.Env
	Cluster *Cluster
	Runtime *svm.Runtime
	Procs   []*svm.Process
	prog    cashapps.Program
}

// svmPlan checks that prog fits c's cluster and returns the cluster's
// configuration with the kernels' import pool, the runtime's
// configuration and its layout.
func svmPlan(c SVMConfig, prog cashapps.Program) (Config, svm.Config, svm.Layout, error) {
	if prog == nil {
		return Config{}, svm.Config{}, svm.Layout{}, errors.New("shrimptb: no program")
	}
	cc := c.Cluster
	pb := uint64(cc.NI.PageBytes)
	bytes := prog.SharedBytes()
	if pb == 0 || bytes == 0 || bytes%pb != 0 {
		return cc, svm.Config{}, svm.Layout{}, fmt.Errorf("shrimptb: program %s: SharedBytes %d must be a positive multiple of %d", prog.Name(), bytes, pb)
	}
	rc := svm.Config{Protocol: c.Protocol, Nodes: cc.Nodes, Pages: int(bytes / pb), PageBytes: int(pb),
		Locks: prog.Locks(), Flags: prog.Flags()}
	if err := rc.Validate(); err != nil {
		return cc, rc, svm.Layout{}, err
	}
	lay, err := svm.NewLayout(rc)
	if err != nil {
		return cc, rc, lay, err
	}
	// assumed: the kernel keeps as many OPT entries for imported pages as
	// the SVM's imports take (svm.Layout.ImportPages: the page replies land
	// in place, so a home imports every other node's copy of its pages),
	// at least the default quarter; the rest of memory stays the
	// process's.
	entries := cc.NI.Entries()
	need := max(lay.ImportPages(rc), entries/vmmc.ProxyPoolFraction)
	if need >= entries || lay.End > uint64(entries-need)*pb {
		return cc, rc, lay, fmt.Errorf("shrimptb: program %s: %d shared pages need %d import entries and %d bytes of node memory: more than the %d-byte node has",
			prog.Name(), rc.Pages, need, lay.End, uint64(entries)*pb)
	}
	cc.Params.ProxyPages = need
	return cc, rc, lay, nil
}

// CheckSVM reports whether prog fits c (BuildSVM's refusal, before any
// simulation).
func CheckSVM(c SVMConfig, prog cashapps.Program) error {
	_, _, _, err := svmPlan(c, prog)
	return err
}

// BuildSVM builds the cluster and the runtime for prog.
func BuildSVM(e *env.Env, c SVMConfig, prog cashapps.Program) (*SVMBench, error) {
	cc, rc, lay, err := svmPlan(c, prog)
	if err != nil {
		return nil, err
	}
	cl, err := Build(e, cc)
	if err != nil {
		return nil, err
	}
	// The runtime's wait loops sleep until the words they wait on change
	// (svm's poll): a finished write to a node's reply, acknowledgement or
	// timestamp page wakes its processor.
	for _, n := range cl.Nodes {
		c0 := n.CPUs[0]
		n.Memory().OnWrite(func(now clock.Time, _ int, addr uint64, _ int) {
			if addr >= lay.Reply && addr < lay.TSOut {
				c0.Wake(now)
			}
		})
	}
	peek := func(node int, addr uint64, n int) []byte {
		buf := make([]byte, n)
		if err := cl.Nodes[node].Memory().Storage().Read(addr, buf); err != nil {
			return nil
		}
		return buf
	}
	hooks := svm.Hooks{
		LocalWrite: func(node int, addr uint64, data []byte) { cl.Ref.LocalWrite(node, addr, data) },
		Peek:       peek,
		Event:      c.Events,
	}
	rt, err := svm.New(e, rc, hooks)
	if err != nil {
		return nil, err
	}
	b := &SVMBench{Env: e, Cluster: cl, Runtime: rt, prog: prog}
	for i, n := range cl.Nodes {
		vp := n.Kernel.NewProcess(fmt.Sprintf("n%d.svm", i))
		pr, err := rt.Install(i, vp, n.CPUs[0])
		if err != nil {
			return nil, err
		}
		b.Procs = append(b.Procs, pr)
	}
	return b, nil
}

// Run runs the program on every node to the end, the checkers, and the
// result; the error joins the violations, unfinished processes and the
// runtime's errors.
func (b *SVMBench) Run() (SVMResult, error) {
	for _, pr := range b.Procs {
		pr.CPU().Run(pr.Start(func(p *svm.Process) { b.prog.Run(p) }))
	}
	res, err := b.Env.Run()
	defer b.Cluster.Close()
	var errs []error
	if err != nil {
		errs = append(errs, fmt.Errorf("shrimptb: %w", err))
	}
	if res.Stopped {
		errs = append(errs, errors.New("shrimptb: the run was cut short (time limit)"))
	}
	b.Runtime.Finish(b.Env.Now())
	out := SVMResult{Run: res}
	for i, pr := range b.Procs {
		if !pr.Done() {
			errs = append(errs, fmt.Errorf("shrimptb: node %d did not finish (%s)", i, pr.CPU().State()))
		}
		out.Stats = append(out.Stats, pr.Stats())
		out.Total.Add(pr.Stats())
		out.Times = append(out.Times, pr.Times())
		out.TotalTimes.Add(pr.Times())
		out.Time = max(out.Time, pr.End())
		ks := b.Cluster.Nodes[i].Kernel.Stats()
		out.Notifications += ks.Delivered
		out.Interrupts += ks.Interrupts
	}
	out.Memory = b.Runtime.Memory()
	if err := b.Runtime.Err(); err != nil {
		errs = append(errs, err)
	}
	if err := b.Cluster.Finish(); err != nil {
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// RunSVM builds and runs prog under c.
func RunSVM(e *env.Env, c SVMConfig, prog cashapps.Program) (SVMResult, error) {
	b, err := BuildSVM(e, c, prog)
	if err != nil {
		return SVMResult{}, err
	}
	return b.Run()
}
