package lciscen

import (
	"fmt"
	"math"

	"github.com/nisim/nisim/host/crl"
	"github.com/nisim/nisim/host/mpi"
	"github.com/nisim/nisim/host/multigame"
	"github.com/nisim/nisim/host/orca"
	"github.com/nisim/nisim/host/panda"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/lcitb"
)

// --- lci-pps ---

// PPSParams are lci-pps's parameters.
type PPSParams struct {
	// Platform is both, ppro (I-pio) or p3 (I-sdma): the combinations
	// Tables V and VI measured.
	Platform string `toml:"platform"`
	// Iters is the round trips measured per latency (after 5 of warm-up).
	Iters int `toml:"iters"`
	// StreamSize and StreamMessages are the unicast throughput's messages.
	StreamSize     int `toml:"stream_size"`
	StreamMessages int `toml:"stream_messages"`
	// Multicast includes Table VI (64 nodes, the slowest part).
	Multicast bool `toml:"multicast"`
	// MPIBcast is MPI_Bcast's algorithm in Table VI: panda (the paper's
	// port, over Panda's broadcast) or binomial (MPICH's own tree of
	// point-to-point messages, mpimc).
	MPIBcast string `toml:"mpi_bcast"`
	// McastIters and McastMessages are Table VI's latency broadcasts and
	// throughput messages (4 KB each).
	McastIters    int `toml:"mcast_iters"`
	McastMessages int `toml:"mcast_messages"`
}

// PPSDefaults are both platforms with Table VI.
func PPSDefaults() *PPSParams {
	return &PPSParams{Platform: "both", Iters: 20, StreamSize: 16 << 10, StreamMessages: 16, Multicast: true, MPIBcast: mpi.BcastPanda, McastIters: 3, McastMessages: 8}
}

// ppsMcastSize is Table VI's throughput message: 4 KB, as lci-report's
// broadcasts (two packets of the 2 KB MTU).
const ppsMcastSize = 4096

// Keys implements scenario.Keyed.
func (p *PPSParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		scenario.Key("platform", "Table V/VI's (PPro I-pio, P3 I-sdma)").OneOf("both", "ppro", "p3").From("both, as the paper"),
		timesKey(scenario.Key("iters", "round trips per latency").AtLeast(2), "round trip"),
		scenario.Key("stream_size", "bytes (fragmented at the MTU)").AtLeast(1).Limit(maxMessageBytes, "lcitb's largest message, 16 MiB"),
		scenario.Key("stream_messages", "messages per throughput").AtLeast(4).Also(payloadNote("stream_size")),
		scenario.Key("multicast", "include Table VI (64 nodes, the slowest part)"),
		scenario.Key("mpi_bcast", "MPI_Bcast in Table VI").OneOf(mpi.BcastPanda, mpi.BcastBinomial).From("panda, the paper's port"),
		scenario.Key("mcast_iters", "broadcasts of 16 bytes timed").AtLeast(2).Budget(bcastEntryBytes, "multicast's count and time"),
		scenario.Key("mcast_messages", "4 KB broadcasts streamed").AtLeast(8).Budget(bcastEntryBytes, "message's count and time"),
	}
}

// Validate implements scenario.Params.
func (p *PPSParams) Validate() error {
	return scenario.FirstError(scenario.CheckKeys(p), checkPayload("stream_messages", p.StreamMessages, p.StreamSize))
}

// PPSScenario is lci-pps.
func PPSScenario() *scenario.Scenario {
	return scenario.Typed("lci-pps", "Panda, MPI, CRL, Orca over LCI: Tables V and VI vs paper",
		PPSDefaults, RunPPS)
}

// ppsPaper are one platform's figures of Tables V and VI: latencies in µs
// (round trips; Table VI's to the last of 64 nodes), throughputs in MB/s.
type ppsPaper struct {
	source string
	// Table V rows: LCI/CRL, LCI/Panda-ST/MPI, LCI/Panda-MT/Orca.
	crlLat, crlTp       [2]float64
	mpiLat, mpiTp       [3]float64
	orcaLat, orcaTp     [3]float64
	mcMPILat, mcMPITp   [3]float64
	mcOrcaLat, mcOrcaTp [3]float64
}

// paperPPS returns Tables V and VI for PPro I-pio or P3 I-sdma.
func paperPPS(platform string) ppsPaper {
	if platform == "P3" {
		return ppsPaper{source: "P3 I-sdma",
			crlLat: [2]float64{18.1, 18.6}, crlTp: [2]float64{158, 150},
			mpiLat: [3]float64{18.1, 18.9, 22.2}, mpiTp: [3]float64{159, 158, 158},
			orcaLat: [3]float64{18.1, 19.8, 22.2}, orcaTp: [3]float64{157, 147, 145},
			mcMPILat: [3]float64{28.9, 33.7, 36.5}, mcMPITp: [3]float64{99, 76, 76},
			mcOrcaLat: [3]float64{37.9, 43.4, 47.1}, mcOrcaTp: [3]float64{99, 76, 76}}
	}
	return ppsPaper{source: "PPro I-pio",
		crlLat: [2]float64{20.4, 23.3}, crlTp: [2]float64{64, 54},
		mpiLat: [3]float64{20.4, 27.0, 42.3}, mpiTp: [3]float64{68, 66, 64},
		orcaLat: [3]float64{20.4, 28.9, 46.0}, orcaTp: [3]float64{63, 57, 52},
		mcMPILat: [3]float64{58.5, 68.3, 77.6}, mcMPITp: [3]float64{33, 31, 31},
		mcOrcaLat: [3]float64{76.5, 94.4, 113.3}, mcOrcaTp: [3]float64{33, 31, 31}}
}

// ppsTolerance is how close a fitted delta must come to the paper's (µs).
const ppsTolerance = 0.1

// RunPPS measures Tables V and VI: the PPro LCI round trip in e, the rest
// each in a fresh env.
func RunPPS(e *env.Env, p *PPSParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	plats := []string{"ppro", "p3"}
	if p.Platform != "both" {
		plats = []string{p.Platform}
	}
	rep := &scenario.Report{Title: "lci-pps: the parallel-programming systems over LCI (section 6: Panda, MPI, CRL, Orca), Tables V and VI, " +
		"PPro I-pio and P3 I-sdma; each layer's one calibrated cost is fitted to its PPro latency delta, the rest is validation"}
	b := lcitb.PPSBench{Size: 16, Warm: 5, Iters: p.Iters, StreamSize: p.StreamSize, Stream: p.StreamMessages}
	per := 14
	if p.Multicast {
		per += 12
	}
	phase, phases := 0, per*len(plats)
	next := func(what string) {
		e.Phase(phase, phases, what)
		phase++
	}
	first := e
	for _, pl := range plats {
		variant := "pio"
		if pl == "p3" {
			variant = "sdma"
		}
		c, err := config(pl, variant, 2)
		if err != nil {
			return nil, err
		}
		pp := paperPPS(c.Platform.Name)
		m, err := measurePPS(first, c, b, next)
		first = nil
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pl, err)
		}
		if m.run != nil {
			rep.Result = *m.run
		}
		addPPSUnicast(rep, c.Platform.Name, pp, m)
		next(c.Platform.Name + " Multigame")
		if err := addMultigame(rep, pl, variant); err != nil {
			return nil, fmt.Errorf("%s: %w", pl, err)
		}
		if p.Multicast {
			c.Nodes = 64
			mc, err := measurePPSMulticast(c, p.MPIBcast, p.McastIters, p.McastMessages, next)
			if err != nil {
				return nil, fmt.Errorf("%s multicast: %w", pl, err)
			}
			addPPSMulticast(rep, c.Platform.Name, pp, mc)
		}
	}
	e.Phase(phase, phases, "")
	pc, mc, cc, oc := panda.DefaultCosts(), mpi.DefaultCosts(), crl.DefaultCosts(), orca.DefaultCosts()
	rep.Add("calibrated parameters (host cycles, both platforms)",
		fmt.Sprintf("CRL Handler %d; Panda Deliver %d, Switch (MT) %d; MPI Call %d; Orca Op %d", cc.Handler, pc.Deliver, pc.Switch, mc.Call, oc.Op), "",
		"each fitted to its layer's PPro I-pio latency delta of Table V (host/crl, host/panda, host/mpi, host/orca DefaultCosts)")
	return rep, nil
}

// ppsUnicast are one platform's Table V measurements.
type ppsUnicast struct {
	lci, crl, st, mpi, mt, orca             clock.Time
	lciTp, crlTp, stTp, mpiTp, mtTp, orcaTp float64
	run                                     *env.Result
}

func measurePPS(e *env.Env, c lcitb.Config, b lcitb.PPSBench, next func(string)) (m ppsUnicast, err error) {
	pc := panda.Config{Costs: panda.DefaultCosts()}
	mtc := pc
	mtc.MT = true
	mcfg := mpi.DefaultConfig()
	name := c.Platform.Name
	steps := []struct {
		what string
		run  func() error
	}{
		{"LCI round trip", func() (err error) {
			if e != nil {
				var res env.Result
				m.lci, res, err = lcitb.LCIRoundTripRun(e, c, b)
				m.run = &res
				return err
			}
			m.lci, err = lcitb.LCIRoundTrip(nil, c, b)
			return err
		}},
		{"CRL write miss", func() (err error) { m.crl, err = lcitb.CRLWriteMiss(nil, c, crl.DefaultCosts(), b); return }},
		{"Panda-ST round trip", func() (err error) { m.st, err = lcitb.PandaRoundTrip(nil, c, pc, b); return }},
		{"MPI round trip", func() (err error) { m.mpi, err = lcitb.MPIRoundTrip(nil, c, pc, mcfg, b); return }},
		{"Panda-MT RPC", func() (err error) { m.mt, err = lcitb.PandaRoundTrip(nil, c, mtc, b); return }},
		{"Orca null operation", func() (err error) { m.orca, err = lcitb.OrcaRoundTrip(nil, c, pc, orca.DefaultCosts(), b); return }},
		{"LCI throughput", func() error { t, err := lcitb.LCIThroughput(nil, c, b); m.lciTp = t.MBps; return err }},
		{"CRL throughput", func() error {
			t, err := lcitb.CRLThroughput(nil, c, crl.DefaultCosts(), b)
			m.crlTp = t.MBps
			return err
		}},
		{"Panda-ST throughput", func() error { t, err := lcitb.PandaThroughput(nil, c, pc, b); m.stTp = t.MBps; return err }},
		{"MPI throughput", func() error { t, err := lcitb.MPIThroughput(nil, c, pc, mcfg, b); m.mpiTp = t.MBps; return err }},
		{"Panda-MT throughput", func() error { t, err := lcitb.PandaThroughput(nil, c, mtc, b); m.mtTp = t.MBps; return err }},
		{"Orca throughput", func() error {
			t, err := lcitb.OrcaThroughput(nil, c, pc, orca.DefaultCosts(), b)
			m.orcaTp = t.MBps
			return err
		}},
	}
	for _, s := range steps {
		next(name + " " + s.what)
		if err := s.run(); err != nil {
			return m, err
		}
	}
	next(name + " done")
	return m, nil
}

// ppsMulticast are one platform's Table VI measurements: latency (µs) and
// throughput (MB/s) at the LCI, Panda and PPS levels of MPI's and Orca's
// rows.
type ppsMulticast struct {
	mpiLat, orcaLat [3]clock.Time
	mpiTp, orcaTp   [3]float64
}

func measurePPSMulticast(c lcitb.Config, bcast string, iters, msgs int, next func(string)) (m ppsMulticast, err error) {
	pc := panda.Config{Costs: panda.DefaultCosts()}
	mcfg := mpi.DefaultConfig()
	mcfg.Bcast = bcast
	rows := []struct {
		what  string
		lat   *[3]clock.Time
		tp    *[3]float64
		casts [3]lcitb.Multicaster
	}{
		{"MPI", &m.mpiLat, &m.mpiTp, [3]lcitb.Multicaster{lcitb.LCIMulticast(false), lcitb.PandaMulticast(pc, false), lcitb.MPIBcast(pc, mcfg)}},
		{"Orca", &m.orcaLat, &m.orcaTp, [3]lcitb.Multicaster{lcitb.LCIMulticast(true), lcitb.PandaMulticast(pc, true), lcitb.OrcaMulticast(pc, orca.DefaultCosts())}},
	}
	small := func(int) []byte { return make([]byte, 16) }
	for _, r := range rows {
		for k, mc := range r.casts {
			next(fmt.Sprintf("%s 64-node %s level %d latency", c.Platform.Name, r.what, k))
			if r.lat[k], err = lcitb.MulticastLatency(nil, c, 1, iters, small, mc); err != nil {
				return m, fmt.Errorf("%s level %d: %w", r.what, k, err)
			}
			next(fmt.Sprintf("%s 64-node %s level %d throughput", c.Platform.Name, r.what, k))
			t, err := lcitb.MulticastThroughput(nil, c, ppsMcastSize, msgs, mc)
			if err != nil {
				return m, fmt.Errorf("%s level %d: %w", r.what, k, err)
			}
			r.tp[k] = t.MBps
		}
	}
	return m, nil
}

// addPPSUnicast prints Table V's rows of a platform.
func addPPSUnicast(rep *scenario.Report, pl string, pp ppsPaper, m ppsUnicast) {
	src := paper + " 6.3 Table V, " + pp.source
	fitted := pl == "PPro"
	lat := func(metric string, model clock.Time, paperUs float64) {
		mm, ps := vsPaper(usf(model), paperUs, "µs")
		rep.Add(pl+" "+metric, mm, ps, src+" (validation)")
		rep.Measure(metricKey(pl+" "+metric), usf(model), "µs")
	}
	delta := func(metric string, model, below clock.Time, paperDelta float64) {
		d := usf(model - below)
		mm, ps := vsPaper(d, paperDelta, "µs")
		how := " (validation)"
		if fitted {
			how = " (calibration: the layer's one fitted cost)"
		}
		rep.AddCalibrated(fitted, pl+" "+metric, mm, ps, src+how)
		rep.Measure(metricKey(pl+" "+metric), d, "µs")
		if fitted {
			rep.Check(pl+" "+metric+" within 0.1 µs", math.Abs(d-paperDelta) <= ppsTolerance, "%.2f µs vs %.1f µs", d, paperDelta)
		}
	}
	tp := func(metric string, model, paperMB float64) {
		mm, ps := vsPaper(model, paperMB, "MB/s")
		rep.Add(pl+" "+metric, mm, ps, src+" (validation)")
		rep.Measure(metricKey(pl+" "+metric), model, "MB/s")
	}
	lat("LCI round trip, 16 bytes", m.lci, pp.mpiLat[0])
	lat("CRL clean write miss, 16-byte region", m.crl, pp.crlLat[1])
	delta("CRL over LCI", m.crl, m.lci, pp.crlLat[1]-pp.crlLat[0])
	lat("Panda-ST round trip", m.st, pp.mpiLat[1])
	delta("Panda-ST over LCI", m.st, m.lci, pp.mpiLat[1]-pp.mpiLat[0])
	lat("MPI_Send/MPI_Recv round trip", m.mpi, pp.mpiLat[2])
	delta("MPI over Panda-ST", m.mpi, m.st, pp.mpiLat[2]-pp.mpiLat[1])
	lat("Panda-MT null RPC", m.mt, pp.orcaLat[1])
	delta("Panda-MT over LCI", m.mt, m.lci, pp.orcaLat[1]-pp.orcaLat[0])
	lat("Orca null operation, remote object", m.orca, pp.orcaLat[2])
	delta("Orca over Panda-MT", m.orca, m.mt, pp.orcaLat[2]-pp.orcaLat[1])
	for _, r := range []struct {
		what  string
		paper float64
	}{{"(CRL row)", pp.crlTp[0]}, {"(MPI row)", pp.mpiTp[0]}, {"(Orca row)", pp.orcaTp[0]}} {
		tp("LCI throughput "+r.what, m.lciTp, r.paper)
	}
	tp("CRL throughput (read misses)", m.crlTp, pp.crlTp[1])
	tp("Panda-ST throughput", m.stTp, pp.mpiTp[1])
	tp("MPI throughput", m.mpiTp, pp.mpiTp[2])
	tp("Panda-MT throughput", m.mtTp, pp.orcaTp[1])
	tp("Orca throughput (RPCs with data)", m.orcaTp, pp.orcaTp[2])
}

// multigameJobs is the jobs per node of lci-pps's Multigame row.
const multigameJobs = 200

// addMultigame runs Multigame's one-way job traffic on 8 nodes and prints
// the rate it sustains (no paper figure: «No results are shown for
// Multigame, because a Multigame rule set does not correspond to a simple
// communication pattern»).
func addMultigame(rep *scenario.Report, pl, variant string) error {
	c, err := config(pl, variant, 8)
	if err != nil {
		return err
	}
	r, err := lcitb.RunMultigame(nil, c, multigame.DefaultConfig(), multigameJobs)
	if err != nil {
		return err
	}
	rep.Add(fmt.Sprintf("%s Multigame, 8 nodes x %d jobs (32-byte descriptors, 8 per message): descriptors/s per node", c.Platform.Name, multigameJobs),
		fmt.Sprintf("%.0f (%d messages)", r.PerNodeRate, r.Messages), "-", paper+" 6.2, 6.3 (no figure; model only)")
	rep.Measure(metricKey(c.Platform.Name+" multigame rate"), r.PerNodeRate, "descriptors/s")
	rep.Check(c.Platform.Name+" Multigame: every descriptor delivered intact", r.Received == r.Sent && r.Bad == 0,
		"%d sent, %d received, %d damaged", r.Sent, r.Received, r.Bad)
	return nil
}

// addPPSMulticast prints Table VI's rows of a platform.
func addPPSMulticast(rep *scenario.Report, pl string, pp ppsPaper, m ppsMulticast) {
	src := paper + " 6.3 Table VI, " + pp.source + ", 64 nodes (validation)"
	names := [2][3]string{{"LCI multicast", "Panda-ST broadcast", "MPI_Bcast"},
		{"LCI F&A + multicast", "Panda-MT ordered broadcast", "Orca replicated update"}}
	lats := [2][3]clock.Time{m.mpiLat, m.orcaLat}
	tps := [2][3]float64{m.mpiTp, m.orcaTp}
	pl2 := [2][3]float64{pp.mcMPILat, pp.mcOrcaLat}
	pt2 := [2][3]float64{pp.mcMPITp, pp.mcOrcaTp}
	for r := range 2 {
		for k := range 3 {
			mm, ps := vsPaper(usf(lats[r][k]), pl2[r][k], "µs")
			rep.Add(pl+" 64 nodes: "+names[r][k]+" latency", mm, ps, src)
			rep.Measure(metricKey(pl+" 64 "+names[r][k]+" latency"), usf(lats[r][k]), "µs")
			mm, ps = vsPaper(tps[r][k], pt2[r][k], "MB/s")
			rep.Add(pl+" 64 nodes: "+names[r][k]+" throughput, 4 KB", mm, ps, src)
			rep.Measure(metricKey(pl+" 64 "+names[r][k]+" throughput"), tps[r][k], "MB/s")
		}
	}
}

// metricKey is a report name as a metric's.
func metricKey(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			out = append(out, r)
		case r >= 'A' && r <= 'Z':
			out = append(out, r-'A'+'a')
		default:
			if len(out) > 0 && out[len(out)-1] != '_' {
				out = append(out, '_')
			}
		}
	}
	return string(out)
}
